// plugin/elf_check.cpp — ELF header and segment bounds of a plugin library, before dlopen.
#include "plugin/elf_check.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace fpcert {
namespace {

#if defined(__x86_64__)
constexpr unsigned kMachine = EM_X86_64;
constexpr const char* kMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr unsigned kMachine = EM_AARCH64;
constexpr const char* kMachineName = "AArch64";
#else
constexpr unsigned kMachine = 0;
constexpr const char* kMachineName = "this machine";
#endif

std::string machine_name(unsigned m) {
  switch (m) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "i386";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM";
    case EM_PPC64: return "PowerPC64";
    case EM_RISCV: return "RISC-V";
    default: return "machine " + std::to_string(m);
  }
}

/// a + b <= limit without overflow.
bool fits(unsigned long long a, unsigned long long b, unsigned long long limit) { return a <= limit && b <= limit - a; }

}  // namespace

std::string elf_problem(std::string_view b, unsigned long long size) {
  if (size < 4 || b.size() < 4 || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0) return "not an ELF file (no \\x7fELF magic)";
  if (b.size() < EI_NIDENT) return "truncated ELF header";
  if (b[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file (this fpcert is 64-bit)";
  if (b[EI_DATA] != ELFDATA2LSB) return "not a little-endian ELF file";
  if (size < sizeof(Elf64_Ehdr) || b.size() < sizeof(Elf64_Ehdr)) return "truncated ELF header";
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  if (eh.e_type != ET_DYN) return eh.e_type == ET_EXEC ? "an executable, not a shared library" : "not a shared library (ELF type " + std::to_string(eh.e_type) + ")";
  if (kMachine && eh.e_machine != kMachine)
    return "built for " + machine_name(eh.e_machine) + "; this machine is " + kMachineName;
  if (eh.e_phnum == 0) return "no program headers";
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) return "program header size " + std::to_string(eh.e_phentsize) + " (expected " + std::to_string(sizeof(Elf64_Phdr)) + ")";
  const unsigned long long ph_bytes = static_cast<unsigned long long>(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (!fits(eh.e_phoff, ph_bytes, size)) return "truncated: the program headers lie past the end of the file";
  if (!fits(eh.e_phoff, ph_bytes, b.size())) return "program headers not read";
  if (eh.e_shoff != 0 && !fits(eh.e_shoff, static_cast<unsigned long long>(eh.e_shnum) * eh.e_shentsize, size))
    return "truncated: the section headers lie past the end of the file (" + std::to_string(size) + " bytes)";
  bool load = false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + eh.e_phoff + i * sizeof(Elf64_Phdr), sizeof ph);
    if (ph.p_type == PT_NULL) continue;
    load = load || ph.p_type == PT_LOAD;
    if (!fits(ph.p_offset, ph.p_filesz, size))
      return "truncated: segment " + std::to_string(i) + " needs bytes up to " + std::to_string(ph.p_offset + ph.p_filesz) +
             " but the file has " + std::to_string(size);
    if (ph.p_type == PT_LOAD && ph.p_memsz < ph.p_filesz) return "corrupt: a loadable segment is larger in the file than in memory";
  }
  if (!load) return "no loadable segment";
  return {};
}

std::string non_regular_kind(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

std::string elf_file_problem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // never blocks on a FIFO swapped in
  if (fd < 0) return std::strerror(errno);
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = S_ISDIR(st.st_mode) ? "a directory, not a shared library" : "not a regular file";
  } else {
    // The ELF header and the program headers sit near the start of the file; 64 KiB holds them for
    // any library a compiler makes (elf_problem says so if not).
    std::string head(65536, '\0');
    ssize_t n = 0, got = 0;
    while (got < static_cast<ssize_t>(head.size()) && (n = ::pread(fd, head.data() + got, head.size() - static_cast<std::size_t>(got), got)) > 0) got += n;
    head.resize(static_cast<std::size_t>(got));
    problem = elf_problem(head, static_cast<unsigned long long>(st.st_size));
  }
  ::close(fd);
  return problem;
}

}  // namespace fpcert
