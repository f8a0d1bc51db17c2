// base/atomic_file.hpp — outputs are replaced atomically (a file written beside its target and
// renamed over it; a folder of files written beside and swapped in as a whole), and case results are
// appended durably. Where an output path really writes (stdout, devices, FIFOs, symlinks):
// base/output_path.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/interrupt.hpp"

namespace fpcert {

/// Write `content` to `path`: `-` to standard output; a character device or FIFO written in place; a
/// symlink followed to its target; a regular file (or a new one) written to a temporary file beside it
/// and renamed over it, keeping its permissions, so a reader sees the old file or the new one, never
/// half of one, and an interruption leaves the old one. Throws InputError naming the path (a
/// directory, a missing or unwritable folder, a full disk, a file-size limit).
void write_file_atomic(const std::string& path, std::string_view content);

/// Give standard output to the data: from here on the process's standard output (fd 1: tables,
/// progress, every fmt::print) goes to standard error, and an output `-` is written to the original
/// standard output, so `--json -` pipes JSON alone (docs/errors.md). Idempotent.
void reserve_stdout_for_data();

/// Append one line (a JSON object, say) to `path` and flush it to the OS, so a crash later loses
/// nothing already reported. Throws InputError naming the path when it cannot.
void append_line(const std::string& path, std::string_view line);

/// A folder of outputs written as one set (gen -o, reference -o): files are written into a hidden
/// staging folder beside `dir`, and commit() puts it in place of `dir` in one step (the old folder is
/// swapped out and removed), so a reader never sees new files beside old ones. `dir` may be missing,
/// empty, or hold only files named in `owned` (what an earlier run of the same command wrote);
/// anything else in it is refused before any work (nothing of the user's is ever deleted). Without
/// commit() (an error, an interruption) the staging folder is removed and `dir` is untouched.
class OutputDir {
 public:
  /// `inputs`: files the command reads, which may not lie inside `dir` (replacing it would delete them).
  OutputDir(const std::string& dir, std::vector<std::string> owned, const std::string& what, const std::vector<std::string>& inputs = {});
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  /// Where to write the file `name` (one of `owned`) before commit().
  std::string file(const std::string& name);
  void commit();
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, what_, staging_;
  std::vector<std::string> owned_, written_;
  TempPath staging_guard_;
  std::vector<TempPath> file_guards_;
  bool committed_ = false;
};

}  // namespace fpcert
