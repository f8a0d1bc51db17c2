// base/output_path.cpp — resolving and checking output paths before any work (docs/errors.md).
#include "base/output_path.hpp"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.hpp"

namespace fpcert {
namespace {

std::string quoted(const std::string& what, const std::string& path) { return what + " '" + path + "'"; }

std::string parent_of(const std::string& p) {
  const auto slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

}  // namespace

/// Follow `path` through every symlink (at most 40, as the kernel does) to the path that is finally
/// written; a dangling link resolves to where its target would be created.
std::string follow_output_links(const std::string& path, const std::string& what) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    const ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) throw InputError(quoted(what, path) + ": cannot read the symlink: " + std::strerror(errno));
    const std::string to(buf, static_cast<std::size_t>(n));
    p = !to.empty() && to[0] == '/' ? to : parent_of(p) + "/" + to;
  }
  throw InputError(quoted(what, path) + ": too many levels of symbolic links");
}

namespace {

/// The temporary file or folder an output is written as first is `.NAME.fpcert-XXXXXX` beside it: a
/// name whose temporary exceeds the folder's limit (NAME_MAX, 255 bytes on most file systems) would fail
/// only when the outputs are written, after the whole run; refused here, before any work.
void check_name_length(const std::string& target, const std::string& given, const std::string& what) {
  const auto slash = target.find_last_of('/');
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  long limit = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (limit <= 0) limit = NAME_MAX;
  constexpr std::size_t kTempExtra = 15;  // "." + NAME + ".fpcert-XXXXXX"
  if (name.size() + kTempExtra > static_cast<std::size_t>(limit))
    throw InputError(what + " '" + given.substr(0, 120) + (given.size() > 120 ? "...'" : "'") + ": the name is " + std::to_string(name.size()) +
                     " bytes; fpcert writes it through a temporary '.NAME.fpcert-XXXXXX' (15 bytes more), which the file system's limit of " +
                     std::to_string(limit) + " bytes per name does not allow: use a name of at most " +
                     std::to_string(static_cast<std::size_t>(limit) - kTempExtra) + " bytes");
}

const char* kind_name(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

/// The folder a new file is created in must exist (or, with create_parent, its nearest existing
/// ancestor) and be a writable folder.
void check_parent(const std::string& target, const std::string& given, const std::string& what, bool create_parent) {
  std::string dir = parent_of(target);
  for (;;) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) throw InputError(quoted(what, given) + ": '" + dir + "' is not a directory");
      if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw InputError(quoted(what, given) + ": cannot write in '" + dir + "': " + std::strerror(errno));
      return;
    }
    if (errno != ENOENT || !create_parent)
      throw InputError(quoted(what, given) + ": the folder '" + dir + "' " +
                       (errno == ENOENT ? std::string("does not exist") : std::string(std::strerror(errno))));
    if (dir == "." || dir == "/") return;
    dir = parent_of(dir);
  }
}

}  // namespace

OutputPlan plan_output(const std::string& path, const std::string& what, bool create_parent) {
  OutputPlan p;
  p.given = path;
  if (path.empty()) throw InputError(what + ": an empty path (give a file name, or leave the option out)");
  if (path == "-") {
    p.how = OutputHow::Stdout;
    p.target = path;
    return p;
  }
  if (path.find('\0') != std::string::npos) throw InputError(what + ": the path holds a NUL byte");
  p.target = follow_output_links(path, what);
  struct stat st {};
  if (::stat(p.target.c_str(), &st) == 0) {
    p.exists = true;
    p.dev = st.st_dev;
    p.ino = st.st_ino;
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      if (::access(p.target.c_str(), W_OK) != 0) throw InputError(quoted(what, path) + ": cannot write: " + std::strerror(errno));
      p.how = OutputHow::InPlace;
      return p;
    }
    if (!S_ISREG(st.st_mode))
      throw InputError(quoted(what, path) + ": is " + kind_name(st.st_mode) +
                       (S_ISDIR(st.st_mode) ? " (give a file name inside it)" : "; fpcert writes regular files, character devices, FIFOs and -"));
  } else if (errno != ENOENT) {
    throw InputError(quoted(what, path) + ": " + std::strerror(errno));
  } else if (!path.empty() && path.back() == '/') {
    throw InputError(quoted(what, path) + ": names a directory (give a file name)");
  }
  p.how = OutputHow::Replace;
  check_parent(p.target, path, what, create_parent);
  check_name_length(p.target, path, what);
  return p;
}

namespace {

/// The identity two paths share when they are the same file: device and inode when it exists, else the
/// resolved folder and file name.
std::string identity(const OutputPlan& p) {
  if (p.exists) return "#" + std::to_string(p.dev) + ":" + std::to_string(p.ino);
  char real[PATH_MAX];
  const std::string dir = parent_of(p.target);
  const std::string name = p.target.substr(p.target.find_last_of('/') == std::string::npos ? 0 : p.target.find_last_of('/') + 1);
  if (::realpath(dir.c_str(), real)) return std::string(real) + "/" + name;
  return p.target;
}

}  // namespace

std::vector<OutputPlan> check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                      const std::vector<std::string>& inputs, bool create_parents) {
  std::vector<OutputPlan> plans;
  std::vector<std::string> whats, ids;
  for (const auto& [what, path] : outputs) {
    if (path.empty()) continue;
    OutputPlan p = plan_output(path, what, create_parents);
    bool device = false;
    if (p.how == OutputHow::InPlace) {
      struct stat st {};
      device = ::stat(p.target.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
    }
    const std::string id = p.how == OutputHow::Stdout ? std::string("-") : identity(p);
    for (std::size_t i = 0; i < ids.size() && !device; ++i)
      if (ids[i] == id)
        throw InputError(what + " '" + path + "' and " + whats[i] + " '" + plans[i].given +
                         "' are the same file: each output needs its own (one would overwrite the other)");
    whats.push_back(what);
    ids.push_back(id);
    plans.push_back(std::move(p));
  }
  for (const auto& in : inputs) {
    if (in.empty() || in == "-") continue;
    struct stat st {};
    if (::stat(in.c_str(), &st) != 0) continue;  // a missing input is its reader's error
    const std::string id = "#" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
    for (std::size_t i = 0; i < plans.size(); ++i)
      if (ids[i] == id && S_ISREG(st.st_mode))
        throw InputError(whats[i] + " '" + plans[i].given + "' is the input '" + in +
                         "': writing it would destroy what is being read (choose another output path)");
  }
  return plans;
}

void check_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& inputs) {
  if (dir.empty()) throw InputError(what + ": an empty path (give a folder)");
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw InputError(quoted(what, dir) + ": exists and is not a directory");
    if (::access(dir.c_str(), W_OK | X_OK) != 0) throw InputError(quoted(what, dir) + ": cannot write in it: " + std::strerror(errno));
  } else if (errno != ENOENT) {
    throw InputError(quoted(what, dir) + ": " + std::strerror(errno));
  }
  std::string clean = follow_output_links(dir, what);  // a link to a folder: the folder is what is replaced
  while (clean.size() > 1 && clean.back() == '/') clean.pop_back();
  check_parent(clean, dir, what, true);
  check_name_length(clean, dir, what);
  char real_dir[PATH_MAX];
  if (!::realpath(dir.c_str(), real_dir)) return;  // not there yet: nothing can be inside it
  const std::string rd = std::string(real_dir) + "/";
  for (const auto& in : inputs) {
    char real_in[PATH_MAX];
    if (in.empty() || !::realpath(in.c_str(), real_in)) continue;
    if (std::string(real_in).rfind(rd, 0) == 0)
      throw InputError(quoted(what, dir) + ": holds the input '" + in +
                       "'; the folder is replaced as a whole, so write the outputs to another folder");
  }
}

}  // namespace fpcert
