// plugin/eltwise_plugin.cpp — elementwise math kernels of plugins (plugin/eltwise_plugin.hpp).
#include "plugin/eltwise_plugin.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <utility>

#include "base/error.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "plugin/plugin_call.hpp"
#include "plugin/rows_plugin.hpp"

// The minor 11 layout: eltwise right after the minor 10 fields (reserved_minor10 their last), eltwise_run last of them (minor
// 13's attention_fp8 follows: FPCERT_KERNEL_SIZE_MINOR11); on
// LP64 the sizes are pinned, so that an edit of the header that moves a field fails here instead of breaking every built
// plugin silently.
static_assert(FPCERT_KERNEL_SIZE_MINOR10 == offsetof(fpcert_kernel, reserved_minor10) + sizeof(std::int32_t));
static_assert(offsetof(fpcert_kernel, eltwise_run) == FPCERT_KERNEL_SIZE_MINOR10 + sizeof(fpcert_eltwise_traits));
static_assert(offsetof(fpcert_kernel, eltwise_run) + sizeof(fpcert_eltwise_run_fn) == FPCERT_KERNEL_SIZE_MINOR11);
static_assert(sizeof(void*) != 8 || (sizeof(fpcert_eltwise_traits) == 88 && sizeof(fpcert_eltwise_args) == 40 && FPCERT_KERNEL_SIZE_MINOR11 == 1984 &&
                                     sizeof(fpcert_kernel) == 2000));
static_assert(offsetof(fpcert_eltwise_args, struct_size) == 0 && offsetof(fpcert_eltwise_args, memory) == 4 &&
              offsetof(fpcert_eltwise_args, count) == 8);

namespace fpcert {

using namespace plugin_detail;

namespace {

using Kerr = std::function<void(const std::string&)>;
constexpr int kMinor = 11;  // the minor whose valid values the messages list

// The ABI's function values and fpcert's, side by side (fpcert_plugin_eltwise.h; oracle/math/fn.hpp). The ABI numbers its
// functions itself: math::Fn's order is fpcert's internal business and may change.
constexpr std::array<std::pair<std::int32_t, math::Fn>, 31> kFns = {{
    {FPCERT_ELTWISE_EXP, math::Fn::Exp},           {FPCERT_ELTWISE_EXP2, math::Fn::Exp2},
    {FPCERT_ELTWISE_EXP10, math::Fn::Exp10},       {FPCERT_ELTWISE_LOG, math::Fn::Log},
    {FPCERT_ELTWISE_LOG2, math::Fn::Log2},         {FPCERT_ELTWISE_LOG10, math::Fn::Log10},
    {FPCERT_ELTWISE_SQRT, math::Fn::Sqrt},         {FPCERT_ELTWISE_RSQRT, math::Fn::Rsqrt},
    {FPCERT_ELTWISE_EXPM1, math::Fn::Expm1},       {FPCERT_ELTWISE_LOG1P, math::Fn::Log1p},
    {FPCERT_ELTWISE_TANH, math::Fn::Tanh},         {FPCERT_ELTWISE_SINH, math::Fn::Sinh},
    {FPCERT_ELTWISE_COSH, math::Fn::Cosh},         {FPCERT_ELTWISE_CBRT, math::Fn::Cbrt},
    {FPCERT_ELTWISE_ERF, math::Fn::Erf},           {FPCERT_ELTWISE_ERFC, math::Fn::Erfc},
    {FPCERT_ELTWISE_SIGMOID, math::Fn::Sigmoid},   {FPCERT_ELTWISE_SILU, math::Fn::Silu},
    {FPCERT_ELTWISE_SOFTPLUS, math::Fn::Softplus}, {FPCERT_ELTWISE_GELU_ERF, math::Fn::GeluErf},
    {FPCERT_ELTWISE_GELU_TANH, math::Fn::GeluTanh}, {FPCERT_ELTWISE_SIN, math::Fn::Sin},
    {FPCERT_ELTWISE_COS, math::Fn::Cos},           {FPCERT_ELTWISE_TAN, math::Fn::Tan},
    {FPCERT_ELTWISE_SINPI, math::Fn::Sinpi},       {FPCERT_ELTWISE_COSPI, math::Fn::Cospi},
    {FPCERT_ELTWISE_DIV, math::Fn::Div},           {FPCERT_ELTWISE_POW, math::Fn::Pow},
    {FPCERT_ELTWISE_ATAN2, math::Fn::Atan2},       {FPCERT_ELTWISE_FMAX, math::Fn::Fmax},
    {FPCERT_ELTWISE_FMIN, math::Fn::Fmin},
}};
// One entry per function fpcert checks: the unary ones and the binary ones.
static_assert(kFns.size() == std::size(math::kAllFns) + std::size(math::kBinaryFns));

/// "1 exp, 2 exp2, ...": the valid function values, for messages.
std::string fn_list() {
  std::string s;
  for (const auto& [v, f] : kFns) s += fmt::format("{}{} {}", s.empty() ? "" : ", ", v, math::to_string(f));
  return s;
}

const char* claim_name(std::int32_t c) {
  switch (c) {
    case FPCERT_ELTWISE_CORRECTLY_ROUNDED: return "a CORRECTLY_ROUNDED";
    case FPCERT_ELTWISE_ULP: return "an ULP";
    case FPCERT_ELTWISE_ABSOLUTE: return "an ABSOLUTE";
    default: return "a RELATIVE";
  }
}

}  // namespace

std::optional<math::Fn> eltwise_fn_from_abi(std::int32_t v) {
  for (const auto& [a, f] : kFns)
    if (a == v) return f;
  return std::nullopt;
}

std::int32_t eltwise_fn_to_abi(math::Fn f) {
  for (const auto& [a, g] : kFns)
    if (g == f) return a;
  return 0;
}

bool has_eltwise_abi_fields(const fpcert_kernel& k) {
  return k.struct_size >= offsetof(fpcert_kernel, eltwise_run) + sizeof(k.eltwise_run);
}

void validate_eltwise_abi(const fpcert_kernel& k, const Kerr& kerr, const std::string& versions, std::uint32_t abi_major,
                          std::uint32_t abi_minor) {
  if (!has_eltwise_abi_fields(k)) {
    if (abi_minor < 11)
      kerr(fmt::format("operation: {} (elementwise) needs plugin ABI minor 11; the plugin was built against {}.{} (its kernels end "
                       "before the elementwise fields)", k.operation, abi_major, abi_minor));
    else
      kerr(fmt::format("operation: {} (elementwise) but struct_size {} ends before the elementwise fields (they end at byte {})",
                       k.operation, k.struct_size, offsetof(fpcert_kernel, eltwise_run) + sizeof(k.eltwise_run)));
    return;
  }
  const fpcert_eltwise_traits& e = k.eltwise;
  if (!k.eltwise_run) kerr("eltwise_run is NULL (required)");
  const auto fn = eltwise_fn_from_abi(e.fn);
  if (!fn) kerr(bad_enum("eltwise.fn", e.fn, fn_list().c_str(), versions, kMinor));
  const Format* in = checked_format("eltwise.in", e.in, kerr, versions);
  const Format* out = checked_format("eltwise.out", e.out, kerr, versions);
  if (fn && in && out) {  // the formats the check covers (f32, f16, bf16; binary functions f32 only): the built-ins' rule
    EltwiseTraits t;
    t.fn = *fn, t.in = in, t.out = out;
    if (const std::string why = eltwise_traits_problem(t); !why.empty()) kerr("eltwise.in, eltwise.out: " + why);
  }

  // The claim: the numbers its kind reads, and zeros where it reads none (a nonzero there is a declaration fpcert would
  // silently ignore).
  auto number = [&](const char* field, double v, bool positive) {
    if (!std::isfinite(v) || v < 0 || (positive && v == 0))
      kerr(fmt::format("eltwise.{} must be finite and {} 0, got {}", field, positive ? ">" : ">=", v));
  };
  auto unused = [&](const char* field, double v) {
    if (v != 0) kerr(fmt::format("eltwise.{} must be 0 for {} claim (it does not read it), got {}", field, claim_name(e.claim), v));
  };
  switch (e.claim) {
    case FPCERT_ELTWISE_CORRECTLY_ROUNDED:
      unused("ulps", e.ulps), unused("ulp_slope", e.ulp_slope), unused("bound", e.bound);
      break;
    case FPCERT_ELTWISE_ULP:
      number("ulps", e.ulps, false), number("ulp_slope", e.ulp_slope, false), unused("bound", e.bound);
      break;
    case FPCERT_ELTWISE_ABSOLUTE:
    case FPCERT_ELTWISE_RELATIVE:
      number("ulps", e.ulps, false), unused("ulp_slope", e.ulp_slope), number("bound", e.bound, true);
      break;
    default:
      kerr(bad_enum("eltwise.claim", e.claim, "1 correctly_rounded, 2 ulp, 3 absolute, 4 relative", versions, kMinor));
  }
  need_01("eltwise.has_domain", e.has_domain, kerr);
  if (e.has_domain == 0 && (e.lo != 0 || e.hi != 0))
    kerr(fmt::format("eltwise.lo and eltwise.hi must be 0 when has_domain is 0 (the claim holds on every input), got [{}, {}]", e.lo, e.hi));
  if (e.has_domain == 1) {
    if (std::isnan(e.lo) || std::isnan(e.hi)) kerr(fmt::format("eltwise.lo and eltwise.hi must be numbers (either may be infinite), got [{}, {}]", e.lo, e.hi));
    else if (e.lo > e.hi) kerr(fmt::format("eltwise.lo > eltwise.hi: the domain [{}, {}] is empty", e.lo, e.hi));
  }
  if (const std::uint32_t bits = e.flags & ~FPCERT_ELTWISE_FLAGS_ALL)
    kerr(fmt::format("eltwise.flags: unknown bits 0x{:X} (valid in ABI minor {}: 0x1 daz, 0x2 ftz, 0x4 fdividef_large){}", bits, kMinor, versions));
  if ((e.flags & FPCERT_ELTWISE_FDIVIDEF_LARGE) && fn && *fn != math::Fn::Div)
    kerr(fmt::format("eltwise.flags: FPCERT_ELTWISE_FDIVIDEF_LARGE (CUDA's __fdividef results beyond 2^126) is for DIV only, not {}",
                     math::to_string(*fn)));
  // The second operand's domain: binary functions only.
  const bool two = fn && math::arity(*fn) == 2;
  if (fn && !two && (e.x2_lo != 0 || e.x2_hi != 0))
    kerr(fmt::format("eltwise.x2_lo and eltwise.x2_hi must be 0 for a unary function ({} has no second operand), got [{}, {}]",
                     math::to_string(*fn), e.x2_lo, e.x2_hi));
  if (two && (e.x2_lo != 0 || e.x2_hi != 0) && !(e.x2_lo >= 0 && e.x2_lo <= e.x2_hi))
    kerr(fmt::format("eltwise.x2_lo, eltwise.x2_hi: the domain of |x2| needs 0 <= x2_lo <= x2_hi (x2_hi may be infinite; both 0: every "
                     "x2), got [{}, {}]", e.x2_lo, e.x2_hi));
  if (!e.claim_source || !*e.claim_source) kerr("eltwise.claim_source is empty (required: where the claim comes from)");
}

EltwiseTraits eltwise_traits_from_abi(const fpcert_kernel& k) {
  const fpcert_eltwise_traits& e = k.eltwise;
  EltwiseTraits t;
  t.fn = *eltwise_fn_from_abi(e.fn);
  t.in = format_from_abi(e.in);
  t.out = format_from_abi(e.out);
  t.claim.kind = e.claim == FPCERT_ELTWISE_ULP        ? math::ClaimKind::Ulp
                 : e.claim == FPCERT_ELTWISE_ABSOLUTE ? math::ClaimKind::Absolute
                 : e.claim == FPCERT_ELTWISE_RELATIVE ? math::ClaimKind::Relative
                                                      : math::ClaimKind::CorrectlyRounded;
  t.claim.ulps = e.ulps;
  t.claim.ulp_slope = e.ulp_slope;
  t.claim.bound = e.bound;
  if (e.has_domain == 1) t.claim.lo = e.lo, t.claim.hi = e.hi;
  t.daz = (e.flags & FPCERT_ELTWISE_DAZ) != 0;
  t.ftz = (e.flags & FPCERT_ELTWISE_FTZ) != 0;
  t.fdividef_large_x2 = (e.flags & FPCERT_ELTWISE_FDIVIDEF_LARGE) != 0;
  if (e.x2_lo != 0 || e.x2_hi != 0) t.x2_lo = e.x2_lo, t.x2_hi = e.x2_hi;
  t.claim_source = e.claim_source;
  return t;
}

namespace {

class PluginEltwiseKernel final : public ElementwiseKernel {
 public:
  PluginEltwiseKernel(const fpcert_kernel* d, std::string origin, std::shared_ptr<void> keepalive)
      : d_(d), origin_(std::move(origin)), name_(d->name), traits_(eltwise_traits_from_abi(*d)), keepalive_(std::move(keepalive)) {}
  const std::string& name() const override { return name_; }
  std::string description() const override {
    return fmt::format("{} [plugin, {} memory, {}]", d_->description && *d_->description ? d_->description : "plugin elementwise function",
                       memory() == MemorySpace::Device ? "device" : "host", origin_);
  }
  Backend backend() const override { return Backend::Plugin; }
  MemorySpace memory() const override { return d_->memory == FPCERT_MEMORY_DEVICE ? MemorySpace::Device : MemorySpace::Host; }
  const EltwiseTraits& eltwise_traits() const override { return traits_; }
  void run(const EltwiseOperands& o) override {
    if (o.count <= 0) return;  // the ABI promises count >= 1
    const bool two = math::arity(traits_.fn) == 2;
    if (two && !o.x2) throw InputError(name_ + ": a binary function needs its second operand (EltwiseOperands::x2)");
    fpcert_eltwise_args a{};
    a.struct_size = sizeof(a);
    a.memory = d_->memory;
    a.count = o.count;
    a.x = o.x;
    a.x2 = two ? o.x2 : nullptr;
    a.y = o.y;
    Message msg;
    void* stream = memory() == MemorySpace::Device ? o.stream : nullptr;
    const std::int32_t st = call_plugin(name_, "eltwise_run", d_->eltwise_run, d_->user_data, static_cast<const fpcert_eltwise_args*>(&a),
                                        stream, msg.buf.data(), msg.buf.size());
    check_run_status(name_, "eltwise_run", st, msg);
  }

 private:
  const fpcert_kernel* d_;
  std::string origin_, name_;
  EltwiseTraits traits_;
  std::shared_ptr<void> keepalive_;
};

}  // namespace

std::unique_ptr<Kernel> make_plugin_eltwise_kernel(const fpcert_kernel* desc, std::string origin, std::shared_ptr<void> keepalive) {
  return std::make_unique<PluginEltwiseKernel>(desc, std::move(origin), std::move(keepalive));
}

}  // namespace fpcert
