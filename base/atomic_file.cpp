// base/atomic_file.cpp — atomic replacement of files and folders, durable appends.
#include "base/atomic_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "base/error.hpp"
#include "base/output_path.hpp"

namespace fpcert {
namespace {

std::string why(int err) {
  if (err == EFBIG) return std::string(std::strerror(err)) + " (the file-size limit, ulimit -f)";
  return std::strerror(err);
}

/// Write all of `content` to fd; false with errno set on failure.
bool write_all(int fd, std::string_view content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, std::min<std::size_t>(left, std::size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return true;
}

mode_t process_umask() {
  static const mode_t m = [] {
    const mode_t u = ::umask(022);
    ::umask(u);
    return u;
  }();
  return m;
}

std::string base_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string dir_name(const std::string& p) {
  const auto s = p.find_last_of('/');
  if (s == std::string::npos) return ".";
  return s == 0 ? "/" : p.substr(0, s);
}

void replace_file(const std::string& given, const std::string& target, std::string_view content) {
  std::string tmp = dir_name(target) + "/." + base_name(target) + ".fpcert-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InputError("cannot write '" + given + "': " + why(errno));
  TempPath guard(tmp, false);
  struct stat old {};
  const mode_t mode = ::stat(target.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~process_umask());
  const bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, content) && ::fsync(fd) == 0;
  const int err = errno;
  if (::close(fd) != 0 || !ok) {
    const int e = ok ? errno : err;
    ::unlink(tmp.c_str());
    throw InputError("cannot write '" + given + "': " + why(e));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw InputError("cannot replace '" + given + "': " + why(e));
  }
}

}  // namespace

namespace {
int g_data_fd = 1;  // where `-` outputs go (reserve_stdout_for_data)
}  // namespace

void reserve_stdout_for_data() {
  if (g_data_fd != 1) return;
  std::fflush(stdout);
  const int fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return;  // no descriptor left: the text stays where it was
  ::dup2(2, 1);
  g_data_fd = fd;
}

void write_file_atomic(const std::string& path, std::string_view content) {
  const OutputPlan p = plan_output(path, "output");
  switch (p.how) {
    case OutputHow::Stdout: {
      std::fflush(stdout);
      if (!write_all(g_data_fd, content)) throw InputError(std::string("cannot write to standard output: ") + why(errno));
      return;
    }
    case OutputHow::InPlace: {
      const int fd = ::open(p.target.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) throw InputError("cannot open '" + path + "': " + why(errno));
      const bool ok = write_all(fd, content);
      const int err = errno;
      ::close(fd);
      if (!ok) throw InputError("cannot write '" + path + "': " + why(err));
      return;
    }
    case OutputHow::Replace: replace_file(path, p.target, content); return;
  }
}

void append_line(const std::string& path, std::string_view line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw InputError("cannot append to '" + path + "': " + why(errno));
  std::string text(line);
  text += '\n';
  const bool ok = write_all(fd, text);
  const int err = errno;
  ::close(fd);
  if (!ok) throw InputError("cannot append to '" + path + "': " + why(err));
}

// ---- OutputDir ------------------------------------------------------------------------------------

namespace {

/// The entries of a folder (without . and ..); false when it cannot be read.
bool list_dir(const std::string& dir, std::vector<std::string>& names) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return false;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return true;
}

/// Remove a folder holding only regular files (what OutputDir writes).
void remove_flat_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (list_dir(dir, names))
    for (const auto& n : names) ::unlink((dir + "/" + n).c_str());
  ::rmdir(dir.c_str());
}

}  // namespace

OutputDir::OutputDir(const std::string& dir, std::vector<std::string> owned, const std::string& what, const std::vector<std::string>& inputs)
    : dir_(dir), what_(what), owned_(std::move(owned)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  check_output_dir(dir_, what_, inputs);
  // A symlink to a folder stays a link: the folder it points to is the one replaced (as a file output's
  // link is followed to its target), never the link turned into a real folder.
  dir_ = follow_output_links(dir_, what_);
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  std::vector<std::string> names;
  if (list_dir(dir_, names)) {
    std::vector<std::string> foreign;
    for (const auto& n : names) {
      struct stat st {};
      const bool regular = ::lstat((dir_ + "/" + n).c_str(), &st) == 0 && S_ISREG(st.st_mode);
      if (!regular || std::find(owned_.begin(), owned_.end(), n) == owned_.end()) foreign.push_back(n);
    }
    if (!foreign.empty()) {
      std::string list;
      for (std::size_t i = 0; i < foreign.size() && i < 5; ++i) list += (i ? ", " : "") + foreign[i];
      if (foreign.size() > 5) list += ", and " + std::to_string(foreign.size() - 5) + " more";
      throw InputError(what_ + " '" + dir + "': holds files this command did not write (" + list +
                       "); the folder is replaced as a whole, so give a new or empty folder");
    }
  }
  // Make the missing ancestors, then the staging folder beside the target.
  std::string parent = dir_name(dir_);
  std::vector<std::string> missing;
  for (std::string p = parent; p != "." && p != "/"; p = dir_name(p)) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) break;
    missing.push_back(p);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it)
    if (::mkdir(it->c_str(), 0777) != 0 && errno != EEXIST)
      throw InputError(what_ + " '" + dir + "': cannot create '" + *it + "': " + why(errno));
  staging_ = parent + "/." + base_name(dir_) + ".fpcert-XXXXXX";
  if (!::mkdtemp(staging_.data())) throw InputError(what_ + " '" + dir + "': cannot create a folder beside it: " + why(errno));
  ::chmod(staging_.c_str(), 0777 & ~process_umask());
  staging_guard_ = TempPath(staging_, true);
}

std::string OutputDir::file(const std::string& name) {
  if (std::find(owned_.begin(), owned_.end(), name) == owned_.end())
    throw std::logic_error("OutputDir: '" + name + "' is not one of the files it owns");
  if (std::find(written_.begin(), written_.end(), name) == written_.end()) {
    written_.push_back(name);
    file_guards_.emplace_back(staging_ + "/" + name, false);
  }
  return staging_ + "/" + name;
}

void OutputDir::commit() {
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) {
    if (::rename(staging_.c_str(), dir_.c_str()) != 0)
      throw InputError(what_ + " '" + dir_ + "': cannot put the new folder in place: " + why(errno));
  } else if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
    remove_flat_dir(staging_);  // now the old set
  } else {
    // No atomic exchange on this file system: move the old folder aside, the new one in, drop the old.
    std::string aside = dir_name(dir_) + "/." + base_name(dir_) + ".fpcert-old-XXXXXX";
    if (!::mkdtemp(aside.data()) || ::rename(dir_.c_str(), aside.c_str()) != 0)
      throw InputError(what_ + " '" + dir_ + "': cannot replace the folder: " + why(errno));
    if (::rename(staging_.c_str(), dir_.c_str()) != 0) {
      const int e = errno;
      ::rename(aside.c_str(), dir_.c_str());
      throw InputError(what_ + " '" + dir_ + "': cannot replace the folder: " + why(e));
    }
    remove_flat_dir(aside);
  }
  committed_ = true;
  for (auto& g : file_guards_) g.release();
  staging_guard_.release();
}

OutputDir::~OutputDir() {
  if (committed_ || staging_.empty()) return;
  remove_flat_dir(staging_);
}

}  // namespace fpcert
