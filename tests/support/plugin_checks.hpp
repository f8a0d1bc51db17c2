// tests/support/plugin_checks.hpp — what the plugin operation tests (tests/plugin/rows_plugin_test.cpp,
// attention_plugin_test.cpp) ask of an in-process table and of a suite run: the validator's problems for a kernel,
// exactly one problem naming given fragments, and every case of a suite for some kernels counted by status.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "suites/run/suite.hpp"

namespace fpcert::test {

/// An in-process host GEMM kernel of this ABI: `in` inputs and operands (rounded to nearest), exact products, `acc` and
/// `out` rounded to nearest, order unknown (`order` its text), deterministic; the caller sets what differs.
inline fpcert_kernel host_gemm_kernel(const char* name, std::int32_t in, std::int32_t acc, std::int32_t out, fpcert_gemm_run_fn run,
                                      void* user_data = nullptr, const char* order = "fma along K") {
  fpcert_kernel k{};
  k.struct_size = sizeof(fpcert_kernel);
  k.operation = FPCERT_OPERATION_GEMM;
  k.name = name;
  k.memory = FPCERT_MEMORY_HOST;
  k.user_data = user_data;
  k.gemm.a_input = k.gemm.b_input = k.gemm.a_operand = k.gemm.b_operand = in;
  k.gemm.input_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.exact_products = 1;
  k.gemm.acc_format = acc;
  k.gemm.out_format = out;
  k.gemm.acc_rounding = FPCERT_ROUNDING_NEAREST_EVEN;
  k.gemm.order = order;
  k.gemm_order.kind = FPCERT_ORDER_UNKNOWN;
  k.determinism = FPCERT_DETERMINISTIC;
  k.gemm_run = run;
  return k;
}

/// The validator's problems for a table of `count` kernels built for ABI minor `minor`.
inline std::vector<std::string> table_problems(const fpcert_kernel* ks, std::uint32_t count = 1, std::uint32_t minor = FPCERT_PLUGIN_ABI_MINOR) {
  fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", count, 0, ks};
  info.abi_minor = minor;
  return validate_plugin_info(&info, "t");
}

/// Exactly one problem, mentioning every fragment.
inline void expect_one_problem(const fpcert_kernel& k, std::initializer_list<const char*> fragments,
                               std::uint32_t minor = FPCERT_PLUGIN_ABI_MINOR) {
  const auto e = table_problems(&k, 1, minor);
  std::string all;
  for (const auto& s : e) all += s + "\n";
  INFO(all);
  REQUIRE(e.size() == 1);
  for (const char* f : fragments) CHECK(e[0].find(f) != std::string::npos);
}

/// A table of one kernel as a plugin built for an older minor lays it out: `k` cut to `size` bytes (the minor's
/// FPCERT_KERNEL_SIZE_MINORn, its struct_size and the stride), copied into `bytes`, which must outlive the table.
inline fpcert_plugin_info older_table(fpcert_kernel k, std::uint32_t minor, std::size_t size, std::vector<unsigned char>& bytes) {
  k.struct_size = static_cast<std::uint32_t>(size);
  bytes.assign(size, 0);
  std::memcpy(bytes.data(), &k, size);
  fpcert_plugin_info info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", 1, 0, reinterpret_cast<const fpcert_kernel*>(bytes.data())};
  info.abi_minor = minor;
  info.kernel_struct_size = static_cast<std::uint32_t>(size);
  return info;
}

/// Every case of a suite for some kernels, counted by status.
struct Tally {
  int pass = 0, fail = 0, other = 0;
  std::vector<std::string> failed;  ///< case ids that failed
  bool failed_case(const std::string& id) const { return std::find(failed.begin(), failed.end(), id) != failed.end(); }
};

/// Every case of `suite` (or only `only_case`) for `kernels`; each case printed on failure.
inline Tally tally_suite(const std::string& suite, const std::vector<std::string>& kernels, const std::string& only_case = "") {
  const SuiteInfo* s = find_suite(suite);
  REQUIRE(s);
  SuiteRunOptions o;
  o.only_case = only_case;
  Tally t;
  for (const CaseResult& c : run_suite(*s, kernels, o).cases) {
    INFO(c.kernel << " " << c.case_id << " " << to_string(c.status) << " " << c.reason);
    t.pass += c.status == CaseStatus::Pass;
    t.fail += c.status == CaseStatus::Fail;
    t.other += c.status != CaseStatus::Pass && c.status != CaseStatus::Fail;
    if (c.status == CaseStatus::Fail) t.failed.push_back(c.case_id);
  }
  return t;
}

}  // namespace fpcert::test
