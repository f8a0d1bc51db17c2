// base/atomic_file.hpp — result files are replaced atomically: written beside, then renamed.
#pragma once

#include <string>
#include <string_view>

namespace fpcert {

/// Write `content` to `path` through `path.tmp.<pid>` and rename(2): a reader sees the old file
/// or the new one, never half of one. Throws InputError when the directory is not writable.
void write_file_atomic(const std::string& path, std::string_view content);

/// Append one line (a JSON object, say) to `path` and flush it to the OS, so a crash later loses
/// nothing already reported.
void append_line(const std::string& path, std::string_view line);

}  // namespace fpcert
