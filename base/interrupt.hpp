// base/interrupt.hpp — what happens when fpcert is interrupted: SIGINT, SIGTERM and SIGHUP remove the
// temporary files of writes in progress (the outputs they would replace stay as they were), print
// what was interrupted and where the results so far are, and end the process by the same signal;
// SIGXFSZ (a file-size limit) is ignored so that the write fails with EFBIG and is reported like any
// other write error. docs/errors.md describes it.
#pragma once

#include <string>

namespace fpcert {

/// Install the handlers (the command does, once, before any work). A signal already ignored stays
/// ignored (nohup). Forked children die quietly: only the process that installed them prints and
/// cleans up; and every child forked from then on is killed when its parent dies (PR_SET_PDEATHSIG),
/// so no isolated case outlives an interrupted or killed run.
void install_interrupt_handlers();

/// Remove every registered temporary file and folder now (async-signal-safe: for handlers and the
/// watchdog, which end the process right after).
void remove_temp_files();

/// What the process is doing, for the message an interruption prints ("running suite quick, case
/// k1024 [3/12] of kernel K; cases finished so far: out/r.json.partial.jsonl"). Empty: nothing said.
void set_interrupt_note(const std::string& note);

/// A temporary file or folder that an interruption removes; unregistered on destruction (or by
/// release() once it was renamed into place). Folders are removed after the files registered later.
class TempPath {
 public:
  TempPath() = default;
  TempPath(const std::string& path, bool is_dir);
  ~TempPath() { release(); }
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  TempPath(TempPath&& o) noexcept : slot_(o.slot_) { o.slot_ = -1; }
  TempPath& operator=(TempPath&& o) noexcept;
  void release();

 private:
  int slot_ = -1;
};

}  // namespace fpcert
