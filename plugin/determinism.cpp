// plugin/determinism.cpp — run-to-run determinism of plugin GEMM kernels: what a kernel declares in the ABI's
// `determinism` (minor 2), its validation, and what fpcert.toml's [determinism] states for a kernel that cannot say
// it (docs/plugin.md, "Declaring nondeterminism").
#include <fmt/format.h>

#include <map>
#include <string>

#include "base/error.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"

namespace fpcert {
namespace {

/// Determinism stated for plugin kernels outside their plugin (declare_plugin_determinism), by kernel name.
std::map<std::string, Determinism>& stated() {
  static std::map<std::string, Determinism> m;
  return m;
}

/// Whether the kernel's struct reaches the field: kernels of minors 0 and 1 end before it. (Not `struct_size <
/// sizeof(fpcert_kernel)`: every later minor appends fields, and a table of an older minor that declares run_to_run
/// would read as deterministic, its declaration unvalidated.)
bool has_field(const fpcert_kernel& k) { return k.struct_size >= FPCERT_KERNEL_SIZE_MINOR1 + sizeof(k.determinism); }

/// The field itself; kernels of minors 0 and 1 end before it.
Determinism declared(const fpcert_kernel& k) {
  if (!has_field(k)) return Determinism::Deterministic;
  return k.determinism == FPCERT_RUN_TO_RUN ? Determinism::RunToRun : Determinism::Deterministic;
}

}  // namespace

Determinism determinism_of(const fpcert_kernel& k, std::string* note) {
  Determinism d = declared(k);
  std::string why = d == Determinism::RunToRun ? "declared by the plugin" : "";
  if (const auto it = stated().find(k.name ? k.name : ""); it != stated().end()) {
    d = it->second;
    why = "stated by the configuration ([determinism])";
  }
  if (note) *note = why;
  return d;
}

std::string determinism_abi_problem(const fpcert_kernel& k, const SummationOrder& order) {
  if (k.operation != FPCERT_OPERATION_GEMM || !has_field(k)) return {};
  if (k.determinism != FPCERT_DETERMINISTIC && k.determinism != FPCERT_RUN_TO_RUN)
    return fmt::format("determinism: {} {} (valid: 1 deterministic, 2 run_to_run)", k.determinism == 0 ? "required, got" : "unknown value",
                       k.determinism);
  KernelTraits t;  // only what determinism_problem reads: the other fields may be invalid (reported on their own)
  t.sum_order = order;
  t.determinism = declared(k);
  if (const std::string why = determinism_problem(t); !why.empty()) return "determinism: " + why;
  return {};
}

void declare_plugin_determinism(const std::string& kernel, Determinism d) {
  const KernelInfo* ki = find_kernel_info(kernel);
  if (!ki)
    throw InputError(fmt::format("determinism for '{}': no such kernel (fpcert kernels lists them; is its plugin loaded?)", kernel));
  if (ki->backend != Backend::Plugin)
    throw InputError(fmt::format("determinism for '{}': a built-in kernel declares its own; only plugin kernels take one from "
                                 "fpcert.toml",
                                 kernel));
  if (ki->operation != Operation::Gemm) throw InputError(fmt::format("determinism for '{}': not a GEMM kernel", kernel));
  stated().erase(kernel);
  KernelTraits t = make_gemm_kernel(kernel)->traits();
  if (t.determinism == Determinism::RunToRun && d == Determinism::Deterministic)
    throw InputError(fmt::format("determinism for '{}': its plugin declares run_to_run, the configuration says deterministic; remove one",
                                 kernel));
  t.determinism = d;
  if (const std::string why = determinism_problem(t); !why.empty()) throw InputError(fmt::format("determinism for '{}': {}", kernel, why));
  stated()[kernel] = d;
}

}  // namespace fpcert
