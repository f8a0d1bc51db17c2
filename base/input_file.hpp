// base/input_file.hpp — reading an input file with a bound: a file is checked (not a folder, not
// larger than its format allows) before it is read, and never more than the bound is read, so
// /dev/zero, a FIFO that never ends or a huge file is refused with its name instead of exhausting
// memory (docs/errors.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fpcert {

/// Read all of `path` when it holds at most `limit` bytes. `what` names the input in messages
/// ("--config", "results file"). With `text`, a NUL byte (binary data) is refused as soon as it is
/// read. Throws InputError: missing, a directory, larger than `limit`, unreadable, binary.
std::string read_input_file(const std::string& path, std::size_t limit, const std::string& what, bool text = true);

/// The sizes used for inputs, in bytes.
inline constexpr std::size_t kConfigLimit = std::size_t{1} << 20;     ///< fpcert.toml: 1 MiB
inline constexpr std::size_t kResultsLimit = std::size_t{1} << 30;    ///< results JSON / JSON lines: 1 GiB

/// Text from the user (a name, a path, a spec, a header) as a message may echo it: control bytes (and,
/// with `ascii_only`, every byte outside printable ASCII) as \xNN, at most `max` bytes, then
/// "... (N characters)". The one escaper of fpcert's messages: a name carrying a newline or an escape
/// sequence cannot forge a line (`fpcert: PASSED`) or drive the terminal.
std::string printable(std::string_view s, std::size_t max = 200, bool ascii_only = false);

/// "1.5 GiB" and the like, for messages.
std::string byte_size_text(std::uint64_t bytes);

}  // namespace fpcert
