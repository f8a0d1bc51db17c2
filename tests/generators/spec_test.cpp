// tests/generators/spec_test.cpp — spec strings: strict parsing, error messages, canonical form.
#include <doctest/doctest.h>

#include <string>

#include "base/error.hpp"
#include "generators/generate.hpp"

using namespace fpcert;

namespace {

/// The InputError message a spec produces ("" when it parses).
std::string error_of(const std::string& spec) {
  try {
    (void)canonical_spec(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; }

}  // namespace

TEST_CASE("spec: the brief's example message for an unknown field") {
  CHECK(error_of("normal:m=10,q=3") ==
        "spec 'normal:m=10,q=3': unknown field 'q' (valid: m, n, k, mean, std, seed, source)");
}

TEST_CASE("spec: an unknown field of any family lists every field of that family") {
  for (const GeneratorInfo& g : list_generators()) {
    const std::string e = error_of(g.name + ":zz=1");
    CAPTURE(g.name);
    CHECK(contains(e, "unknown field 'zz'"));
    for (const ParamInfo& p : g.params) CHECK(contains(e, p.name));
  }
}

TEST_CASE("spec: an unknown family lists every generator") {
  const std::string e = error_of("gauss:m=1");
  CHECK(contains(e, "unknown generator 'gauss'"));
  for (const GeneratorInfo& g : list_generators()) CHECK(contains(e, g.name));
  CHECK(contains(error_of(""), "no generator name"));
  CHECK(contains(error_of(":m=1"), "no generator name"));
}

TEST_CASE("spec: strict values") {
  CHECK(contains(error_of("normal:m=10x"), "field 'm': '10x' is not an integer"));
  CHECK(contains(error_of("normal:m=1.5"), "field 'm': '1.5' is not an integer"));
  CHECK(contains(error_of("normal:m=+4"), "field 'm': '+4' is not an integer"));
  CHECK(contains(error_of("normal:m= 4"), "field 'm': ' 4' is not an integer"));
  CHECK(contains(error_of("normal:m=-5"), "field 'm' = -5 is out of range [1, 16777216]"));
  CHECK(contains(error_of("normal:m=0"), "field 'm' = 0 is out of range"));
  CHECK(contains(error_of("normal:m=16777217"), "out of range"));
  CHECK(contains(error_of("normal:m=99999999999999999999"), "not an integer"));  // beyond int64
  CHECK(contains(error_of("normal:m=1,m=2"), "field 'm' given twice"));
  CHECK(contains(error_of("normal:m="), "field 'm' has an empty value"));
  CHECK(contains(error_of("normal:m"), "field 'm' has no value"));
  CHECK(contains(error_of("normal:m=4,"), "empty field"));
  CHECK(contains(error_of("normal:"), "empty field"));
  CHECK(contains(error_of("normal:,m=4"), "empty field"));
  CHECK(contains(error_of("normal:std=1e"), "field 'std': '1e' is not a finite real number"));
  CHECK(contains(error_of("normal:std=inf"), "not a finite real number"));
  CHECK(contains(error_of("normal:std=nan"), "not a finite real number"));
  CHECK(contains(error_of("normal:std=1e999"), "not a finite real number"));
  CHECK(contains(error_of("normal:std=-1"), "field 'std' = -1 is out of range"));
  CHECK(contains(error_of("normal:seed=-1"), "not an unsigned 64-bit integer"));
  CHECK(contains(error_of("normal:seed=18446744073709551616"), "not an unsigned 64-bit integer"));  // 2^64
  CHECK(error_of("normal:seed=18446744073709551615") == "");
  CHECK(contains(error_of("normal:source=e2m1"), "field 'source': 'e2m1' is not one of: f32, f64, f16, bf16, tf32, e4m3, e5m2"));
  CHECK(contains(error_of("normal:source=fp99"), "is not one of"));
  CHECK(contains(error_of("probe:kind=zigzag"), "field 'kind': 'zigzag' is not one of: ones, alternating, ascending, descending"));
  CHECK(contains(error_of("cancel:kappa=0.5"), "field 'kappa' = 0.5 is out of range"));
  CHECK(contains(error_of("spectral:mode=6"), "field 'mode' = 6 is out of range [1, 5]"));
}

TEST_CASE("spec: cross-field errors name the fields (raised by generate)") {
  auto gen_error = [](const std::string& s) {
    try {
      (void)generate(s);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(contains(gen_error("uniform:lo=2,hi=1"), "field 'lo' (2) must be below field 'hi' (1)"));
  CHECK(contains(gen_error("normal:m=65536,k=65536"), "exceeds the limit"));
  CHECK(contains(gen_error("cancel:n=6,kappa=1e30,source=bf16"), "field 'n' = 6 is too short"));
  CHECK(contains(gen_error("cancel_gemm:m=64,n=64,k=100,kappa=1e16"), "field 'k' = 100 is too small"));
  CHECK(contains(gen_error("span:k=100,block=32"), "field 'block' = 32 does not divide field 'k' = 100"));
  CHECK(contains(gen_error("span:s=40,source=f16"), "normal range"));
  CHECK(contains(gen_error("exp_uniform:emin=10,emax=5"), "field 'emin' (10) must not exceed field 'emax' (5)"));
  CHECK(contains(gen_error("exp_uniform:emax=200"), "overflows source f32"));
  CHECK(contains(gen_error("spectral:m=5000"), "field 'm' = 5000 exceeds"));
  CHECK(contains(gen_error("probe:value=0.1"), "field 'value' = 0.1 is not exactly representable in source f32"));
  CHECK(contains(gen_error("exp_sweep:target=f32,source=f16"), "exceeds source f16"));
}

TEST_CASE("spec: canonical form fills defaults in declared order - canonicalisation is idempotent") {
  for (const GeneratorInfo& g : list_generators()) {
    const std::string c = canonical_spec(g.name);
    CAPTURE(c);
    CHECK(c.rfind(g.name + ":", 0) == 0);
    std::size_t pos = 0;
    for (const ParamInfo& p : g.params) {  // every field, in declared order, with its default
      const std::string field = p.name + "=" + p.default_value;
      const std::size_t at = c.find((pos == 0 ? ":" : ",") + field, pos);
      REQUIRE(at != std::string::npos);
      pos = at + 1;
    }
    CHECK(canonical_spec(c) == c);
  }
}

TEST_CASE("spec: equivalent spellings canonicalise to the same string") {
  const std::string c = canonical_spec("normal:m=8,n=4,k=2,seed=7");
  CHECK(canonical_spec("normal:seed=7,k=2,n=4,m=8") == c);
  CHECK(canonical_spec("normal:m=8,n=4,k=2,seed=7,source=fp32") == c);  // alias
  CHECK(canonical_spec("normal:m=8,n=4,k=2,seed=7,std=1.0,mean=-0") == c);  // 1.0 == 1, -0 == 0
  CHECK(canonical_spec("normal:m=8,n=4,k=2,seed=7,source=fp32,mean=0.0") == c);
  CHECK(canonical_spec("cancel:kappa=1e12") == canonical_spec("cancel:kappa=1000000000000"));
  CHECK(canonical_spec("cancel:kappa=1e12") != canonical_spec("cancel:kappa=1.0000000000001e12"));
  // reals print as the shortest decimal that reads back to the same double
  CHECK(canonical_real(0.013) == "0.013");
  CHECK(canonical_real(0.1 + 0.2) == "0.30000000000000004");
  CHECK(canonical_real(1e12) == "1e+12");
  CHECK(canonical_real(-60) == "-60");
}

TEST_CASE("spec: generate(problem.spec) reproduces the problem - spec - family - seed - source recorded") {
  const Problem p = generate("scaled_int:k=3,m=2,n=5,seed=99,source=bf16");
  CHECK(p.family == "scaled_int");
  CHECK(p.seed == 99);
  CHECK(*p.source == bf16);
  CHECK(p.m == 2);
  CHECK(p.n == 5);
  CHECK(p.k == 3);
  CHECK(p.spec == canonical_spec("scaled_int:k=3,m=2,n=5,seed=99,source=bf16"));
  const Problem q = generate(p.spec);
  CHECK(q.a.data == p.a.data);
  CHECK(q.b.data == p.b.data);
}

TEST_CASE("list_generators: every family documented - every parameter with a default that parses") {
  CHECK(list_generators().size() == 27);  // softmax: docs/softmax.md; norm: docs/normalization.md; attention: docs/attention.md;
                                          // softmax_bwd, norm_bwd, attention_bwd: docs/backward.md
  for (const GeneratorInfo& g : list_generators()) {
    CAPTURE(g.name);
    CHECK(!g.summary.empty());
    for (const ParamInfo& p : g.params) {
      CHECK(!p.help.empty());
      CHECK(!p.default_value.empty());
    }
    CHECK(error_of(g.name) == "");
  }
  const std::string text = generator_list_text();
  for (const GeneratorInfo& g : list_generators()) CHECK(contains(text, "\n" + g.name));
}
