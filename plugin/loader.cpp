// plugin/loader.cpp — dlopen, validation and wrapping of plugin kernels (the ABI is
// plugin/fpcert_plugin.h; the rules are in docs/plugin.md).
#include "plugin/loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>

#include "base/fpenv.hpp"
#include "kernels/device/device_api.hpp"
#include "kernels/gemm/cpu/ozaki2.hpp"
#include "plugin/attention_plugin.hpp"
#include "plugin/elf_check.hpp"
#include "plugin/eltwise_plugin.hpp"
#include "plugin/epilogue_plugin.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/gemm_abi.hpp"
#include "plugin/plugin_call.hpp"
#include "plugin/reduce_plugin.hpp"
#include "plugin/rows_plugin.hpp"

namespace fpcert {

// The minor 7 layout: gemm_batched right after the minor 6 fields, the batch fields right after fpcert_gemm_args'
// minor 5 ones; on LP64 the sizes are pinned (as plugin/rows_plugin.cpp pins minor 6), so that an edit of the header
// that moves a field fails here instead of breaking every built plugin silently.
// (Minor 8's epilogue fields: plugin/epilogue_plugin.cpp pins them.)
static_assert(FPCERT_KERNEL_SIZE_MINOR6 + 2 * sizeof(std::int32_t) == FPCERT_KERNEL_SIZE_MINOR7);
static_assert(offsetof(fpcert_gemm_args, batch) == offsetof(fpcert_gemm_args, c_in) + sizeof(const void*));
static_assert(sizeof(void*) != 8 || (FPCERT_KERNEL_SIZE_MINOR7 == 576 && offsetof(fpcert_gemm_args, batch) == 136 &&
                                     offsetof(fpcert_gemm_args, epilogue) == 168));

using namespace plugin_detail;  // call_plugin, Message, describe_failure (plugin/plugin_call.hpp)

namespace {

// ---- the GEMM kernel wrapper ---------------------------------------------------------------

fpcert_gemm_shape shape_of(std::int64_t m, std::int64_t n, std::int64_t k, Layout a, Layout b, Layout c = Layout::RowMajor) {
  fpcert_gemm_shape s{};
  s.m = m;
  s.n = n;
  s.k = k;
  s.a_layout = a == Layout::RowMajor ? FPCERT_LAYOUT_ROW_MAJOR : FPCERT_LAYOUT_COL_MAJOR;
  s.b_layout = b == Layout::RowMajor ? FPCERT_LAYOUT_ROW_MAJOR : FPCERT_LAYOUT_COL_MAJOR;
  s.c_layout = c == Layout::RowMajor ? FPCERT_LAYOUT_ROW_MAJOR : FPCERT_LAYOUT_COL_MAJOR;
  return s;
}

/// The order a kernel declares (ABI minor 1); kernels of minor 0 end before it: unknown. Validated.
SummationOrder order_from_abi(const fpcert_kernel& k) {
  return k.struct_size < FPCERT_KERNEL_SIZE_MINOR1 ? SummationOrder::unknown() : gemm_order_from_abi(k.gemm_order);
}

/// Orders stated for plugin kernels outside their plugin (declare_plugin_order), by kernel name.
std::map<std::string, SummationOrder>& order_overrides() {
  static std::map<std::string, SummationOrder> m;
  return m;
}

KernelTraits traits_from_abi(const fpcert_kernel& k) {
  KernelTraits t = gemm_traits_from_abi(k.gemm, order_from_abi(k));  // plugin/gemm_abi.cpp
  if (const auto it = order_overrides().find(k.name ? k.name : ""); it != order_overrides().end() && !t.sum_order.known())
    t.sum_order = it->second;
  // An Ozaki-II order brings the scheme's input domain, as the built-in kernels of that order declare it (finite inputs;
  // lines wider than its moduli keep within fp64's envelope graded by the scheme's own bound: docs/plugin.md).
  if (t.sum_order.kind == OrderKind::Ozaki2 && !t.domain.restricted()) t.domain = ozaki2_domain(t.sum_order.moduli);
  t.determinism = determinism_of(k, &t.determinism_note);  // plugin/determinism.cpp
  // The layouts (ABI minor 4); older kernels end before them: row-major only, as 0 says.
  if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR3 + sizeof(k.gemm_layouts) && k.gemm_layouts != 0)
    t.layouts = static_cast<std::uint8_t>(k.gemm_layouts);
  // alpha/beta (ABI minor 5); older kernels end before it: alpha = 1, beta = 0, no C.
  if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR4 + sizeof(k.gemm_alpha_beta)) t.alpha_beta = k.gemm_alpha_beta != 0;
  // Strided batches (ABI minor 7); older kernels end before it: one matrix per call.
  if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR6 + sizeof(k.gemm_batched)) t.batched = k.gemm_batched != 0;
  t.epilogue = epilogue_from_abi(k);  // fused epilogue (ABI minor 8); older kernels end before it: none
  // Shape multiples (ABI minor 10); older kernels end before it: any shape, as 0 says.
  if (has_shape_multiple_field(k) && k.gemm_shape_multiple > 1) t.shape_multiple = k.gemm_shape_multiple;
  return t;
}

/// Scratch memory for a plugin's run(), grown on demand and kept across runs (so timed runs do not
/// pay for it), in host memory or on the device.
class Workspace {
 public:
  explicit Workspace(MemorySpace m) : memory_(m) {}
  ~Workspace() { release(); }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  void* get(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    if (bytes <= bytes_) return p_;
    release();
    if (memory_ == MemorySpace::Device) {
      if (!device_) {
        std::string why;
        device_ = make_cuda_api(&why);
        if (!device_) throw DeviceError("plugin workspace on the device: " + why);
      }
      p_ = device_->alloc(bytes);
    } else {
      p_ = std::malloc(bytes);
      if (!p_) throw DeviceError(fmt::format("plugin workspace: host allocation of {} bytes failed", bytes));
    }
    bytes_ = bytes;
    return p_;
  }

 private:
  void release() {
    if (!p_) return;
    if (memory_ == MemorySpace::Device) device_->free(p_);
    else std::free(p_);
    p_ = nullptr;
    bytes_ = 0;
  }
  MemorySpace memory_;
  std::unique_ptr<DeviceApi> device_;
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

class PluginGemmKernel final : public GemmKernel {
 public:
  PluginGemmKernel(const fpcert_kernel* d, std::string origin, std::string plugin, std::shared_ptr<void> keepalive)
      : d_(d), origin_(std::move(origin)), plugin_(std::move(plugin)), name_(d->name), traits_(traits_from_abi(*d)),
        memory_(d->memory == FPCERT_MEMORY_DEVICE ? MemorySpace::Device : MemorySpace::Host), workspace_(memory_),
        keepalive_(std::move(keepalive)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override {
    const std::string own = d_->description && *d_->description ? d_->description : "(no description)";
    return fmt::format("{} [plugin {}, {} memory, {}]", own, plugin_, memory_ == MemorySpace::Device ? "device" : "host", origin_);
  }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return memory_; }
  const KernelTraits& traits() const override { return traits_; }

  Support can_implement(std::int64_t m, std::int64_t n, std::int64_t k) const override {
    pending_error_.clear();
    if (!d_->gemm_can_implement) return Support::yes();
    const fpcert_gemm_shape s = shape_of(m, n, k, Layout::RowMajor, Layout::RowMajor);
    Message msg;
    const std::int32_t st = call_plugin(name_, "gemm_can_implement", d_->gemm_can_implement, d_->user_data, &s,
                                        msg.buf.data(), msg.buf.size());
    if (st == FPCERT_STATUS_OK) return Support::yes();
    if (st == FPCERT_STATUS_NOT_SUPPORTED) {
      const std::string why = msg.text();
      return Support::no(fmt::format("plugin kernel '{}' does not implement m={} n={} k={}{}{}", name_, m, n, k,
                                     why.empty() ? "" : ": ", why));
    }
    // A failure is not a "not supported" verdict: run() reports it as the case's failure.
    pending_error_ = describe_failure(name_, "gemm_can_implement", st, msg);
    return Support::yes();
  }

  /// A layout other than row-major: the declared mask first (GemmKernel's), then the plugin's gemm_can_implement with
  /// the call's layouts (row-major calls keep the one can_implement call they always had).
  Support can_implement_operands(const GemmOperands& ops) const override {
    if (ops.layout().row_major() || !d_->gemm_can_implement) return Support::yes();
    const fpcert_gemm_shape s = shape_of(ops.m, ops.n, ops.k, ops.a_layout, ops.b_layout, ops.c_layout);
    Message msg;
    const std::int32_t st = call_plugin(name_, "gemm_can_implement", d_->gemm_can_implement, d_->user_data, &s,
                                        msg.buf.data(), msg.buf.size());
    if (st == FPCERT_STATUS_OK) return Support::yes();
    const std::string why = msg.text();
    if (st == FPCERT_STATUS_NOT_SUPPORTED)
      return Support::no(fmt::format("plugin kernel '{}' does not implement layout {}{}{}", name_, to_string(ops.layout()),
                                     why.empty() ? "" : ": ", why));
    pending_error_ = describe_failure(name_, "gemm_can_implement", st, msg);
    return Support::yes();
  }

  void run(const GemmOperands& ops) override {
    if (!pending_error_.empty()) throw DeviceError(pending_error_);
    if (const std::string why = epilogue_call_problem(traits_.epilogue, ops); !why.empty())
      throw NotSupportedError(fmt::format("plugin kernel '{}' is called with {}", name_, why));
    const fpcert_gemm_shape s = shape_of(ops.m, ops.n, ops.k, ops.a_layout, ops.b_layout, ops.c_layout);
    std::size_t ws_bytes = 0;
    if (d_->gemm_workspace_bytes) {
      Message msg;
      const std::int32_t st = call_plugin(name_, "gemm_workspace_bytes", d_->gemm_workspace_bytes, d_->user_data, &s,
                                          &ws_bytes, msg.buf.data(), msg.buf.size());
      check_run_status(name_, "gemm_workspace_bytes", st, msg);
    }
    void* ws = workspace_.get(ws_bytes);
    fpcert_gemm_args a{};
    a.struct_size = sizeof(fpcert_gemm_args);
    a.memory = d_->memory;
    a.a_format = d_->gemm.a_input;
    a.b_format = d_->gemm.b_input;
    a.c_format = d_->gemm.out_format;
    a.shape = s;
    a.a = ops.a;
    a.lda = ops.lda;
    a.b = ops.b;
    a.ldb = ops.ldb;
    a.c = ops.c;
    a.ldc = ops.ldc;
    a.alpha = ops.alpha;  // minor 5: 1, 0 and NULL unless the kernel declares gemm_alpha_beta (the runner's call)
    a.beta = ops.beta;
    a.c_in = ops.c_in;
    a.batch = ops.batch;  // minor 7: 1 and strides 0 unless the kernel declares gemm_batched (the runner's call)
    a.stride_a = ops.stride_a;
    a.stride_b = ops.stride_b;
    a.stride_c = ops.stride_c;
    epilogue_args_to_abi(ops, a.epilogue);  // minor 8: none unless the kernel declares gemm_epilogue (the runner's call)
    Message msg;
    const std::int32_t st = call_plugin(name_, "gemm_run", d_->gemm_run, d_->user_data, static_cast<const fpcert_gemm_args*>(&a),
                                        ws, ws_bytes, ops.stream, msg.buf.data(), msg.buf.size());
    check_run_status(name_, "gemm_run", st, msg);
  }

 private:
  const fpcert_kernel* d_;
  std::string origin_, plugin_, name_;
  KernelTraits traits_;
  MemorySpace memory_;
  Workspace workspace_;
  mutable std::string pending_error_;
  std::shared_ptr<void> keepalive_;
};

// ---- the registry of loaded plugins -------------------------------------------------------------

std::vector<PluginSummary>& plugins() {
  static std::vector<PluginSummary> p;
  return p;
}

bool valid_name(const char* s) {
  if (!s || !*s) return false;
  for (const char* p = s; *p; ++p) {
    const char c = *p;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return std::strlen(s) <= 128;
}

bool name_taken(const std::string& n) { return find_kernel_info(n) != nullptr; }

}  // namespace

// ---- validation --------------------------------------------------------------------------------

namespace {

/// Kernel i of a table whose stride is kernel_struct_size (minor 0 tables are shorter than this fpcert's).
const fpcert_kernel& kernel_at(const fpcert_plugin_info* info, std::uint32_t i) {
  return *reinterpret_cast<const fpcert_kernel*>(reinterpret_cast<const char*>(info->kernels) +
                                                 static_cast<std::size_t>(i) * info->kernel_struct_size);
}

}  // namespace

void declare_plugin_order(const std::string& kernel, const SummationOrder& order) {
  if (const std::string why = check_order(order); !why.empty())
    throw InputError(fmt::format("order of '{}': {}", kernel, why));
  const KernelInfo* ki = find_kernel_info(kernel);
  if (!ki) throw InputError(fmt::format("order for '{}': no such kernel (fpcert kernels lists them; is its plugin loaded?)", kernel));
  if (ki->backend != Backend::Plugin)
    throw InputError(fmt::format("order for '{}': a built-in kernel declares its own order; only plugin kernels take one from "
                                 "fpcert.toml or --order",
                                 kernel));
  if (ki->operation != Operation::Gemm) throw InputError(fmt::format("order for '{}': not a GEMM kernel", kernel));
  order_overrides().erase(kernel);
  const SummationOrder own = make_gemm_kernel(kernel)->traits().sum_order;
  if (own.known() && !(own == order))
    throw InputError(fmt::format("order for '{}': its plugin declares {}, the configuration says {}; remove one", kernel,
                                 order_spec(own), order_spec(order)));
  order_overrides()[kernel] = order;
}

std::vector<std::string> validate_plugin_info(const fpcert_plugin_info* info, const std::string& origin) {
  std::vector<std::string> errs;
  const std::string host_v = fmt::format("{}.{}", FPCERT_PLUGIN_ABI_MAJOR, FPCERT_PLUGIN_ABI_MINOR);
  auto err = [&](const std::string& s) { errs.push_back(origin.empty() ? s : origin + ": " + s); };
  if (!info) {
    err("fpcert_plugin_enumerate returned no table");
    return errs;
  }
  // Only abi_major and abi_minor are read before the major is known to match.
  const std::string plugin_v = fmt::format("{}.{}", info->abi_major, info->abi_minor);
  if (info->abi_major != FPCERT_PLUGIN_ABI_MAJOR) {
    err(fmt::format("the plugin was built against fpcert plugin ABI {}, this fpcert speaks ABI {} (majors differ: the "
                    "struct layouts are incompatible); rebuild the plugin against this fpcert's <fpcert/plugin.h>",
                    plugin_v, host_v));
    return errs;
  }
  // A plugin of a newer minor may use enum values this fpcert does not know: say so where it matters.
  const std::string versions = info->abi_minor > FPCERT_PLUGIN_ABI_MINOR
                                   ? fmt::format(" (this fpcert speaks plugin ABI {}; the plugin was built against {})", host_v, plugin_v)
                                   : "";
  if (info->struct_size != sizeof(fpcert_plugin_info))
    err(fmt::format("fpcert_plugin_info.struct_size is {}, expected {} for ABI major {}{}", info->struct_size,
                    sizeof(fpcert_plugin_info), FPCERT_PLUGIN_ABI_MAJOR, versions));
  // The kernel table's stride: minor 0 kernels end before gemm_order; a newer minor may append more.
  const std::size_t expect_kernel = info->abi_minor == 0   ? FPCERT_KERNEL_SIZE_MINOR0
                                    : info->abi_minor == 1 ? FPCERT_KERNEL_SIZE_MINOR1
                                    : info->abi_minor == 2 ? FPCERT_KERNEL_SIZE_MINOR2
                                    : info->abi_minor == 3 ? FPCERT_KERNEL_SIZE_MINOR3
                                    : info->abi_minor == 4 ? FPCERT_KERNEL_SIZE_MINOR4
                                    : info->abi_minor == 5 ? FPCERT_KERNEL_SIZE_MINOR5
                                    : info->abi_minor == 6 ? FPCERT_KERNEL_SIZE_MINOR6
                                    : info->abi_minor == 7 ? FPCERT_KERNEL_SIZE_MINOR7
                                    : info->abi_minor == 8 ? FPCERT_KERNEL_SIZE_MINOR8
                                    : info->abi_minor == 9 ? FPCERT_KERNEL_SIZE_MINOR9
                                    : info->abi_minor == 10 ? FPCERT_KERNEL_SIZE_MINOR10
                                    : info->abi_minor == 11 ? FPCERT_KERNEL_SIZE_MINOR11
                                    : info->abi_minor == 12 ? FPCERT_KERNEL_SIZE_MINOR12
                                                           : sizeof(fpcert_kernel);
  // A newer minor's entries may be longer, but a C compiler's sizeof is a multiple of the alignment (a table
  // of any other stride has misaligned entries: found by tests/fuzz/fuzz_plugin), and no entry is 64 KiB.
  const bool kernel_size_ok = info->abi_minor > FPCERT_PLUGIN_ABI_MINOR
                                  ? info->kernel_struct_size >= sizeof(fpcert_kernel) && info->kernel_struct_size <= 65536 &&
                                        info->kernel_struct_size % alignof(fpcert_kernel) == 0
                                  : info->kernel_struct_size == expect_kernel;
  if (!kernel_size_ok)
    err(fmt::format("fpcert_plugin_info.kernel_struct_size is {}, expected sizeof(fpcert_kernel) = {} for ABI {}.{}{}{}",
                    info->kernel_struct_size, expect_kernel, info->abi_major, info->abi_minor,
                    info->abi_minor > FPCERT_PLUGIN_ABI_MINOR ? " or more (a multiple of its alignment, at most 65536)" : "", versions));
  if (!errs.empty()) return errs;
  if (!info->plugin_name || !*info->plugin_name) err("fpcert_plugin_info.plugin_name is empty (required)");
  if (info->kernel_count == 0 || !info->kernels) {
    err("the plugin lists no kernels (kernel_count 0 or kernels NULL)");
    return errs;
  }
  if (info->kernel_count > 100000) {
    err(fmt::format("kernel_count {} is implausible (a corrupt table?)", info->kernel_count));
    return errs;
  }

  std::vector<std::string> seen;
  for (std::uint32_t i = 0; i < info->kernel_count; ++i) {
    const fpcert_kernel& k = kernel_at(info, i);
    const std::string kname = k.name ? k.name : "";
    const std::string where = fmt::format("kernel #{} '{}'", i, kname);
    auto kerr = [&](const std::string& s) { err(where + ": " + s); };
    if (k.struct_size != info->kernel_struct_size)
      kerr(fmt::format("struct_size is {}, expected sizeof(fpcert_kernel) = {}{}", k.struct_size, info->kernel_struct_size, versions));
    if (!valid_name(k.name)) {
      kerr("name must be 1..128 characters of letters, digits, '_', '-', '.'");
    } else if (std::find(seen.begin(), seen.end(), kname) != seen.end()) {
      kerr("name listed twice in this plugin");
    } else if (name_taken(kname)) {
      const KernelInfo* ki = find_kernel_info(kname);
      kerr(fmt::format("name already taken by {} (kernel names must be unique across fpcert and its plugins)",
                       ki && !ki->origin.empty() ? "a kernel of " + ki->origin : ki ? "a built-in kernel" : "another plugin's conversion"));
    }
    seen.push_back(kname);
    if (k.memory != FPCERT_MEMORY_HOST && k.memory != FPCERT_MEMORY_DEVICE)
      kerr(fmt::format("memory: unknown value {} (valid: 1 host, 2 device){}", k.memory, versions));

    auto need_format = [&](const char* field, std::int32_t v, bool allow_scale) { return need_format_abi(field, v, allow_scale, kerr, versions); };
    auto need_rounding = [&](const char* field, std::int32_t v, bool allow_stochastic) {
      need_rounding_abi(field, v, allow_stochastic, kerr, versions);
    };

    if (k.operation == FPCERT_OPERATION_GEMM) {
      if (!k.gemm_run) kerr("gemm_run is NULL (required)");
      validate_gemm_traits_abi("gemm.", k.gemm, kerr, versions);  // plugin/gemm_abi.cpp
      if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR1) validate_gemm_order_abi("gemm_order.", k.gemm_order, kerr, versions);
      if (const std::string why = determinism_abi_problem(k, order_from_abi(k)); !why.empty()) kerr(why + versions);
      if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR3 + sizeof(k.gemm_layouts) && k.gemm_layouts > FPCERT_LAYOUTS_ALL)
        kerr(fmt::format("gemm_layouts: unknown bits 0x{:X} (valid: FPCERT_LAYOUT_BIT combinations, at most 0xFF){}",
                         k.gemm_layouts & ~FPCERT_LAYOUTS_ALL, versions));
      if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR4 + sizeof(k.gemm_alpha_beta) && k.gemm_alpha_beta > 1)
        kerr(fmt::format("gemm_alpha_beta = {}: 0 or 1{}", k.gemm_alpha_beta, versions));
      if (k.struct_size >= FPCERT_KERNEL_SIZE_MINOR6 + sizeof(k.gemm_batched) && k.gemm_batched > 1)
        kerr(fmt::format("gemm_batched = {}: 0 or 1{}", k.gemm_batched, versions));
      validate_epilogue_abi(k, kerr, versions);  // minor 8 (plugin/epilogue_plugin.cpp)
      if (has_shape_multiple_field(k)) {  // minor 10
        if (k.gemm_shape_multiple > 4096) kerr(fmt::format("gemm_shape_multiple = {}: 0 (any shape) or in [1, 4096]{}", k.gemm_shape_multiple, versions));
        if (k.reserved_minor10 != 0) kerr(fmt::format("reserved_minor10 = {}: must be 0{}", k.reserved_minor10, versions));
      }
    } else if (k.operation == FPCERT_OPERATION_CONVERSION) {
      const fpcert_conversion_traits& c = k.conversion;
      if (!k.conversion_run) kerr("conversion_run is NULL (required)");
      need_format("conversion.src_format", c.src_format, true);
      const Format* dst = need_format("conversion.dst_format", c.dst_format, true);
      need_rounding("conversion.rounding", c.rounding, false);
      const auto sat = saturation_from_abi(c.saturation);
      if (!sat) kerr(fmt::format("conversion.saturation: unknown value {} (valid: 1 inf, 2 finite, 3 nan){}", c.saturation, versions));
      else if (dst && !saturation_valid(*dst, *sat))
        kerr(fmt::format("conversion.saturation {} is not possible for {} ({}); use {}", to_string(*sat), dst->tag,
                         to_string(dst->specials), to_string(default_saturation(*dst))));
      const auto nan = nan_payload_from_abi(c.nan_payload, info->abi_minor), nan2 = nan_payload_from_abi(c.nan_payload, 2);
      if (!nan && nan2)  // a minor 2 value in a table built for minor 0 or 1
        kerr(fmt::format("conversion.nan_payload: value {} ({}) needs plugin ABI minor 2; the plugin was built against {}.{} (valid "
                         "there: 1 preserve, 2 canonical)", c.nan_payload, to_string(*nan2), info->abi_major, info->abi_minor));
      else if (!nan)
        kerr(fmt::format("conversion.nan_payload: unknown value {} (valid: 1 preserve, 2 canonical, 3 nvidia, 4 any, 5 ml_dtypes){}",
                         c.nan_payload, versions));
      else if (dst && !nan_payload_problem(*dst, *nan).empty())
        kerr(fmt::format("conversion.nan_payload {}: {}", to_string(*nan), nan_payload_problem(*dst, *nan)));
    } else if (k.operation == FPCERT_OPERATION_REDUCTION && k.struct_size >= FPCERT_KERNEL_SIZE_MINOR3) {
      validate_reduce_abi(k, kerr, versions);  // plugin/reduce_plugin.cpp
    } else if (k.operation == FPCERT_OPERATION_REDUCTION) {
      kerr(fmt::format("operation: 3 (reduction) needs plugin ABI minor 3; the plugin was built against {}.{} (its kernels end "
                       "before the reduction fields)", info->abi_major, info->abi_minor));
    } else if (k.operation == FPCERT_OPERATION_SOFTMAX || k.operation == FPCERT_OPERATION_NORM) {
      validate_rows_abi(k, kerr, versions, info->abi_major, info->abi_minor);  // plugin/rows_plugin.cpp
    } else if (k.operation == FPCERT_OPERATION_ATTENTION || k.operation == FPCERT_OPERATION_ATTENTION_BWD) {
      validate_attention_abi(k, kerr, versions, info->abi_major, info->abi_minor);  // plugin/attention_plugin.cpp
    } else if (k.operation == FPCERT_OPERATION_ELEMENTWISE) {
      validate_eltwise_abi(k, kerr, versions, info->abi_major, info->abi_minor);  // plugin/eltwise_plugin.cpp
    } else {
      kerr(fmt::format("operation: unknown value {} (valid: 1 gemm, 2 conversion, 3 reduction, 4 softmax, 5 norm, 6 attention, "
                       "7 attention_bwd, 8 elementwise){}", k.operation, versions));
    }
  }
  return errs;
}

// ---- registration -------------------------------------------------------------------------------

PluginSummary register_plugin_info(const fpcert_plugin_info* info, const std::string& origin, std::shared_ptr<void> keepalive) {
  PluginSummary s;
  s.path = origin;
  s.resolved = origin;
  s.name = info->plugin_name;
  s.version = info->plugin_version ? info->plugin_version : "";
  s.abi_major = info->abi_major;
  s.abi_minor = info->abi_minor;
  const std::string plugin = s.version.empty() ? s.name : s.name + " " + s.version;
  for (std::uint32_t i = 0; i < info->kernel_count; ++i) {
    const fpcert_kernel* d = &kernel_at(info, i);
    KernelInfo ki;
    ki.name = d->name;
    ki.backend = Backend::Plugin;
    ki.mutant = false;
    ki.origin = origin;
    std::vector<std::string>* listed = &s.conversion_kernels;
    if (d->operation == FPCERT_OPERATION_GEMM) {
      ki.make = [d, origin, plugin, keepalive]() -> std::unique_ptr<GemmKernel> {
        return std::make_unique<PluginGemmKernel>(d, origin, plugin, keepalive);
      };
      listed = &s.gemm_kernels;
    } else if (d->operation == FPCERT_OPERATION_REDUCTION) {
      ki.operation = Operation::Reduction;
      ki.make = [d, origin, keepalive]() -> std::unique_ptr<Kernel> { return make_plugin_reduce_kernel(d, origin, keepalive); };
      listed = &s.reduction_kernels;
    } else if (d->operation == FPCERT_OPERATION_SOFTMAX || d->operation == FPCERT_OPERATION_NORM) {  // plugin/rows_plugin.cpp
      const bool softmax = d->operation == FPCERT_OPERATION_SOFTMAX;
      ki.operation = softmax ? Operation::Softmax : Operation::Norm;
      ki.make = [d, origin, keepalive]() -> std::unique_ptr<Kernel> { return make_plugin_rows_kernel(d, origin, keepalive); };
      listed = softmax ? &s.softmax_kernels : &s.norm_kernels;
    } else if (d->operation == FPCERT_OPERATION_ATTENTION || d->operation == FPCERT_OPERATION_ATTENTION_BWD) {  // plugin/attention_plugin.cpp
      const bool fwd = d->operation == FPCERT_OPERATION_ATTENTION;
      ki.operation = fwd ? Operation::Attention : Operation::AttentionBackward;
      ki.make = [d, origin, keepalive]() -> std::unique_ptr<Kernel> { return make_plugin_attention_kernel(d, origin, keepalive); };
      listed = fwd ? &s.attention_kernels : &s.attention_bwd_kernels;
    } else if (d->operation == FPCERT_OPERATION_ELEMENTWISE) {  // plugin/eltwise_plugin.cpp
      ki.operation = Operation::Elementwise;
      ki.make = [d, origin, keepalive]() -> std::unique_ptr<Kernel> { return make_plugin_eltwise_kernel(d, origin, keepalive); };
      listed = &s.eltwise_kernels;
    } else {
      ki.operation = Operation::Conversion;
      ki.make = [d, origin, keepalive, minor = info->abi_minor]() -> std::unique_ptr<ConversionKernel> {
        return std::make_unique<PluginConverter>(d, origin, keepalive, minor);
      };
    }
    register_kernel(std::move(ki));
    listed->push_back(d->name);
  }
  return s;
}

const std::vector<PluginSummary>& loaded_plugins() { return plugins(); }

const PluginSummary& load_plugin(const std::string& path) {
  (void)kernel_registry();  // built-ins first, so plugin names are checked against them
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real))
    throw PluginError(fmt::format("plugin '{}': no such file ({})", path, std::strerror(errno)));
  const std::string resolved = real;
  for (const auto& p : plugins())
    if (p.resolved == resolved) return p;
  // Only a regular file can be a library: opening a FIFO blocked for ever (docs/errors.md).
  if (const std::string kind = non_regular_kind(resolved); !kind.empty())
    throw PluginError(fmt::format("plugin '{}' is {}, not a regular file: a plugin is a shared library (.so)", path, kind));

  // A truncated or foreign library can crash the dynamic loader itself: check it before dlopen.
  if (const std::string problem = elf_file_problem(resolved); !problem.empty())
    throw PluginError(fmt::format("plugin '{}' cannot be loaded: {} (is it a shared library built for this machine?)", path, problem));
  ::dlerror();
  // A path without '/' would make dlopen search the library path: always pass one with a slash.
  void* h = ::dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    throw PluginError(fmt::format("plugin '{}' cannot be loaded: {} (is it a shared library built for this machine, "
                                  "with its dependencies on the library path?)",
                                  path, e ? e : "dlopen failed"));
  }
  ::dlerror();
  void* sym = ::dlsym(h, FPCERT_PLUGIN_ENUMERATE_SYMBOL);
  const char* dl_err_text = ::dlerror();
  // dlerror()'s text lives in the library's state: copy it before dlclose frees that.
  const std::string dl_err = dl_err_text ? dl_err_text : "";
  if (!sym || dl_err_text) {
    ::dlclose(h);
    throw PluginError(fmt::format("plugin '{}' does not export {}() ({}); a plugin exports it with extern \"C\" and "
                                  "FPCERT_PLUGIN_EXPORT (see <fpcert/plugin.h>)",
                                  path, FPCERT_PLUGIN_ENUMERATE_SYMBOL, dl_err_text ? dl_err : "symbol is NULL"));
  }
  auto enumerate = reinterpret_cast<fpcert_plugin_enumerate_fn>(sym);
  Message msg;
  const fpcert_plugin_info* info = nullptr;
  {
    // The enumerate call, like every plugin call, runs where no exception can unwind into fpcert.
    struct Call {
      static const fpcert_plugin_info* go(fpcert_plugin_enumerate_fn f, char* m, std::size_t n) noexcept {
        return f(FPCERT_PLUGIN_ABI_MAJOR, FPCERT_PLUGIN_ABI_MINOR, m, n);
      }
    };
    info = Call::go(enumerate, msg.buf.data(), msg.buf.size());
  }
  if (!info) {
    const std::string m = msg.text();
    throw PluginError(fmt::format("plugin '{}': {}() returned NULL: {}", path, FPCERT_PLUGIN_ENUMERATE_SYMBOL,
                                  m.empty() ? "(no message)" : m));
  }
  const auto errs = validate_plugin_info(info, "");
  if (!errs.empty()) {
    std::string all;
    for (const auto& e : errs) all += "\n  " + e;
    throw PluginError(errs.size() == 1 ? fmt::format("plugin '{}': {}", path, errs[0])
                                       : fmt::format("plugin '{}': {} problems:{}", path, errs.size(), all));
  }
  // The library stays loaded until the process exits (kernel objects and forked children use it).
  std::shared_ptr<void> keep(h, [](void*) {});
  PluginSummary s = register_plugin_info(info, path, keep);
  s.resolved = resolved;
  plugins().push_back(std::move(s));
  return plugins().back();
}

// ---- conversions ---------------------------------------------------------------------------------

PluginConverter::PluginConverter(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive, std::uint32_t abi_minor)
    : desc_(desc), origin_(std::move(origin)), name_(desc->name), description_(desc->description ? desc->description : ""),
      memory_(desc->memory == FPCERT_MEMORY_DEVICE ? MemorySpace::Device : MemorySpace::Host), keepalive_(std::move(keepalive)),
      abi_minor_(abi_minor) {
  traits_.src = format_from_abi(desc->conversion.src_format);
  traits_.dst = format_from_abi(desc->conversion.dst_format);
  traits_.rounder.rounding = *rounding_from_abi(desc->conversion.rounding);
  traits_.rounder.saturation = *saturation_from_abi(desc->conversion.saturation);
  // Validated. A PRESERVE of ABI minor 0 or 1 meant "NaN differences counted apart unless --strict-nan": kept,
  // unless fpcert.toml's [nan] states the kernel's convention.
  const auto stated = plugin_nan_override(name_);
  traits_.rounder.nan = stated.value_or(nan_payload_from_abi(desc->conversion.nan_payload, abi_minor).value_or(NanPayload::Preserve));
  traits_.nan_counted_apart = !stated && abi_minor < 2 && traits_.rounder.nan == NanPayload::Preserve;
}

void PluginConverter::run(const ConvertOperands& ops) {
  fpcert_conversion_args a{};
  a.struct_size = sizeof(fpcert_conversion_args);
  a.memory = desc_->memory;
  a.src_format = desc_->conversion.src_format;
  a.dst_format = desc_->conversion.dst_format;
  a.rounding = desc_->conversion.rounding;
  a.saturation = desc_->conversion.saturation;
  a.count = ops.count;
  a.src = ops.src;
  a.dst = ops.dst;
  Message msg;
  const std::int32_t st = call_plugin(name_, "conversion_run", desc_->conversion_run, desc_->user_data,
                                      static_cast<const fpcert_conversion_args*>(&a), ops.stream, msg.buf.data(), msg.buf.size());
  check_run_status(name_, "conversion_run", st, msg);
}

}  // namespace fpcert
