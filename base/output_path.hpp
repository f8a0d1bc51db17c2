// base/output_path.hpp — where an output path really writes, checked before any work: `-` is
// standard output, character devices and FIFOs are written in place, symlinks are followed to their
// target, directories are refused, a missing or unwritable folder is refused; two outputs that are
// the same file, or an output that is one of the command's inputs, are refused (docs/errors.md).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace fpcert {

/// How an output is written.
enum class OutputHow {
  Stdout,   ///< the path is `-`: written to standard output
  InPlace,  ///< a character device or FIFO (/dev/null, a named pipe): opened and written, never replaced
  Replace,  ///< a regular file, existing or new: written beside it and renamed over it (atomic)
};

struct OutputPlan {
  std::string given;   ///< the path as typed
  std::string target;  ///< what is written: `given` with every symlink followed (the same when none)
  OutputHow how = OutputHow::Replace;
  bool exists = false;  ///< target exists (its identity below is valid)
  dev_t dev = 0;
  ino_t ino = 0;
};

/// `path` with every symlink followed (at most 40 hops) to what is finally written; a dangling link
/// resolves to where its target would be created. Throws InputError (a loop) naming `what`.
std::string follow_output_links(const std::string& path, const std::string& what);

/// Resolve and check one output path. `what` names it in messages ("--json", "-o"). With
/// `create_parent`, a missing parent folder is fine when the nearest existing ancestor is writable
/// (the folder is made later). Throws InputError: empty path, a directory, a block device or socket,
/// a symlink loop, a missing or unwritable parent folder, a name that is too long for the file system once
/// fpcert's temporary name (`.NAME.fpcert-XXXXXX`, 15 bytes more) is made from it.
OutputPlan plan_output(const std::string& path, const std::string& what, bool create_parent = false);

/// A command's outputs, checked together before it does any work: each as plan_output, no two the
/// same file (character devices such as /dev/null excepted), at most one `-`, and none the same file
/// as one of `inputs` (paths the command reads). `outputs` are (what, path) pairs; empty paths are
/// skipped (an output not asked for). Throws InputError naming both options of a clash.
std::vector<OutputPlan> check_outputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                                      const std::vector<std::string>& inputs = {}, bool create_parents = false);

/// An output folder (gen -o, reference -o): refused when it exists and is not a folder, or when it (or
/// its nearest existing ancestor) is not writable; `inputs` may not lie inside it. Throws InputError.
void check_output_dir(const std::string& dir, const std::string& what, const std::vector<std::string>& inputs = {});

}  // namespace fpcert
