// plugin/elf_check.hpp — a plugin file checked before dlopen: a truncated or foreign shared library
// can crash the dynamic loader itself (SIGBUS when it maps segments past the end of the file), so
// the ELF header, the program headers and every segment must lie inside the file and match this
// machine before fpcert hands it to dlopen.
#pragma once

#include <string>
#include <string_view>

namespace fpcert {

/// What is wrong with the shared library in `bytes` (its beginning: at least the ELF header and the
/// program header table) given the file's full size; empty when dlopen may be tried.
std::string elf_problem(std::string_view bytes, unsigned long long file_size);

/// What `path` is when it is not a regular file ("a FIFO", "a directory", "a character device", ...),
/// found without opening it (opening a FIFO blocks); empty for a regular file or a path that cannot be
/// examined (its opener says why).
std::string non_regular_kind(const std::string& path);

/// The same for a file on disk (reads only its headers). Empty: fine to dlopen.
std::string elf_file_problem(const std::string& path);

}  // namespace fpcert
