// suites/ops/conversion/conversion_faults.cpp — see conversion_faults.hpp.
#include "suites/ops/conversion/conversion_faults.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "base/codes.hpp"
#include "base/philox.hpp"
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
      std::uint64_t res = from_container(dst, load_code(ops.dst, i, db));
      switch (f_) {
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
          const std::uint64_t want = convert(src, code, dst, t.rounder, rbits).code, got = convert(src, code, dst, changed_, rbits).code;
          if (want != got) res = got;
        }
      }
      store_code(ops.dst, i, db, to_container(dst, res));
    }
  }

 private:
  std::unique_ptr<ConversionKernel> k_;
  ConversionFault f_;
  std::string name_;
  Rounder changed_;
};

}  // namespace

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
