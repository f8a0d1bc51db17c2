// suites/ops/conversion/conversion_faults.cpp — see conversion_faults.hpp.
#include "suites/ops/conversion/conversion_faults.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "base/codes.hpp"
#include "base/philox.hpp"
#include "oracle/convert/convert_batch.hpp"
#include "oracle/round.hpp"

namespace fpcert {

const std::vector<ConversionFaultInfo>& conversion_fault_catalogue() {
  static const std::vector<ConversionFaultInfo> c = {
      {ConversionFault::TowardZero, "cvt_rz", "round toward zero (truncation) instead of to nearest", "round=rz"},
      {ConversionFault::TiesAway, "cvt_ties_away", "ties rounded away from zero instead of to even", "round=rna"},
      {ConversionFault::NoSaturation, "cvt_no_saturation", "overflow to Inf (NaN without Inf) where satfinite is declared", "sat=inf|nan"},
      {ConversionFault::SaturatesNan, "cvt_saturates", "overflow to the largest finite value where Inf or NaN is due", "sat=satfinite"},
      {ConversionFault::FlushOutputs, "cvt_ftz", "subnormal results flushed to a zero of their sign", "ftz"},
      {ConversionFault::NanPayloadLost, "cvt_nan_payload_lost", "every NaN result the canonical NaN where payloads are kept", "nan=canonical"},
      {ConversionFault::NanNotQuieted, "cvt_nan_not_quieted", "a NaN result's quiet bit copied from the source (sNaN not quieted)",
       "nan_not_quieted"},
      {ConversionFault::ZeroSignLost, "cvt_zero_sign_lost", "every zero result written as +0", "zero_sign_lost"},
  };
  return c;
}

namespace {

/// The declared rounder with the fault's change (rounding, saturation, NaN convention faults).
Rounder changed_rounder(ConversionFault f, const ConversionTraits& t) {
  Rounder r = t.rounder;
  switch (f) {
    case ConversionFault::TowardZero: r.rounding = Rounding::TowardZero; break;
    case ConversionFault::TiesAway: r.rounding = Rounding::NearestAway; break;
    case ConversionFault::NoSaturation: r.saturation = t.dst->has_inf() ? Saturation::Inf : Saturation::NaN; break;
    case ConversionFault::SaturatesNan: r.saturation = Saturation::Finite; break;
    case ConversionFault::NanPayloadLost: r.nan = NanPayload::Canonical; break;
    default: break;
  }
  return r;
}

std::uint64_t quiet_bit(const Format& f) { return std::uint64_t{1} << (f.frac_bits - 1); }

class FaultyConversion final : public ConversionKernel {
 public:
  FaultyConversion(std::unique_ptr<ConversionKernel> k, ConversionFault f, std::string name)
      : k_(std::move(k)), f_(f), name_(std::move(name)), changed_(changed_rounder(f, k_->conversion())) {}
  const std::string& name() const override { return name_; }
  std::string description() const override { return k_->description(); }
  Backend backend() const override { return k_->backend(); }
  bool is_mutant() const override { return true; }
  const ConversionTraits& conversion() const override { return k_->conversion(); }
  void run(const ConvertOperands& ops) override {
    k_->run(ops);
    const ConversionTraits& t = k_->conversion();
    const Format &src = *t.src, &dst = *t.dst;
    const int sb = container_bytes(src), db = container_bytes(dst);
    for (std::int64_t i = 0; i < ops.count; ++i) {
      const std::uint64_t code = from_container(src, load_code(ops.src, i, sb));
      const std::uint64_t res = from_container(dst, load_code(ops.dst, i, db));
      store_code(ops.dst, i, db, to_container(dst, faulty_result(f_, t, changed_, code, res)));
    }
  }

 private:
  std::unique_ptr<ConversionKernel> k_;
  ConversionFault f_;
  std::string name_;
  Rounder changed_;
};

}  // namespace

std::uint64_t faulty_result(ConversionFault f, const ConversionTraits& t, const Rounder& changed, std::uint64_t code, std::uint64_t res) {
  const Format &src = *t.src, &dst = *t.dst;
  switch (f) {
    case ConversionFault::FlushOutputs:
      if (classify(dst, res) == FpClass::Subnormal) res &= dst.sign_mask();
      break;
    case ConversionFault::NanNotQuieted:
      if (classify(src, code) == FpClass::NaN && classify(dst, res) == FpClass::NaN)
        res = (res & ~quiet_bit(dst)) | ((code & quiet_bit(src)) ? quiet_bit(dst) : 0);
      break;
    case ConversionFault::ZeroSignLost:
      if (classify(dst, res) == FpClass::Zero) res &= ~dst.sign_mask();
      break;
    default: {  // where the changed conversion differs from the declared one, its result
      const std::uint32_t rbits = t.rounder.rounding == Rounding::Stochastic ? random_bits32(t.seed, code) : 0;
      const std::uint64_t want = convert(src, code, dst, t.rounder, rbits).code, got = convert(src, code, dst, changed, rbits).code;
      if (want != got) res = got;
    }
  }
  return res;
}

Rounder faulty_rounder(ConversionFault f, const ConversionTraits& t) { return changed_rounder(f, t); }

bool conversion_fault_on_results(ConversionFault f) {
  return f == ConversionFault::FlushOutputs || f == ConversionFault::ZeroSignLost || f == ConversionFault::NanNotQuieted;
}

std::function<void(std::uint64_t, std::uint64_t, std::uint8_t*, int)> conversion_device_fault(ConversionFault f, const ConversionTraits& t) {
  return [f, t](std::uint64_t first, std::uint64_t n, std::uint8_t* res, int bytes) {
    const Rounder changed = changed_rounder(f, t);
    // A changed rounder: both conversions by the batch converter (a device sweep is 2^32 codes).
    std::vector<std::uint32_t> want, got;
    if (!conversion_fault_on_results(f) && t.src->total_bits() <= 32 && t.dst->total_bits() <= 32) {
      want.resize(n);
      got.resize(n);
      convert_code_range(*t.src, *t.dst, t.rounder, t.seed, first, want.data(), nullptr, n);
      convert_code_range(*t.src, *t.dst, changed, t.seed, first, got.data(), nullptr, n);
    }
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto at = static_cast<std::int64_t>(i);
      std::uint64_t r = from_container(*t.dst, load_code(res, at, bytes));
      r = want.empty() ? faulty_result(f, t, changed, first + i, r) : (want[i] != got[i] ? got[i] : r);
      store_code(res, at, bytes, to_container(*t.dst, r));
    }
  };
}

std::string conversion_fault_not_applicable(ConversionFault f, const ConversionTraits& t) {
  const Format &src = *t.src, &dst = *t.dst;
  const Rounding r = t.rounder.rounding;
  switch (f) {
    case ConversionFault::TowardZero:
      return r == Rounding::NearestEven || r == Rounding::NearestAway ? "" : "the declared rounding is not to nearest";
    case ConversionFault::TiesAway: return r == Rounding::NearestEven ? "" : "the declared rounding is not to nearest, ties to even";
    case ConversionFault::NoSaturation:
      return t.rounder.saturation == Saturation::Finite && dst.has_nan() ? "" : "satfinite is not declared (or the destination has no Inf nor NaN)";
    case ConversionFault::SaturatesNan:
      return t.rounder.saturation != Saturation::Finite && saturation_valid(dst, Saturation::Finite) ? "" : "satfinite is declared";
    case ConversionFault::FlushOutputs: return dst.subnormals ? "" : "the destination has no subnormals";
    case ConversionFault::NanPayloadLost:
      return t.rounder.nan == NanPayload::Preserve && src.has_nan() && nan_payload_problem(dst, NanPayload::Canonical).empty()
                 ? ""
                 : "NaN payloads are not declared kept";
    case ConversionFault::NanNotQuieted: return src.has_inf() && dst.has_inf() ? "" : "source or destination is not an IEEE format";
    case ConversionFault::ZeroSignLost: return dst.sign_bits ? "" : "the destination has no sign";
  }
  return "unknown fault";
}

std::string conversion_fault_named(ConversionFault f, const ConversionTraits& t) {
  if (f == ConversionFault::NoSaturation) return t.dst->has_inf() ? "sat=inf" : "sat=nan";
  for (const ConversionFaultInfo& i : conversion_fault_catalogue())
    if (i.fault == f) return i.named;
  return "";
}

std::unique_ptr<ConversionKernel> make_conversion_fault_injector(std::unique_ptr<ConversionKernel> k, ConversionFault f) {
  if (!k) throw std::invalid_argument("make_conversion_fault_injector: no kernel");
  if (k->memory() != MemorySpace::Host) throw std::invalid_argument("make_conversion_fault_injector: " + k->name() + " is not a host kernel");
  if (const std::string why = conversion_fault_not_applicable(f, k->conversion()); !why.empty())
    throw std::invalid_argument("make_conversion_fault_injector: " + why);
  std::string id;
  for (const ConversionFaultInfo& i : conversion_fault_catalogue())
    if (i.fault == f) id = i.id;
  const std::string name = k->name() + "~" + id;
  return std::make_unique<FaultyConversion>(std::move(k), f, name);
}

}  // namespace fpcert
