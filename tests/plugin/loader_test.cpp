// tests/plugin/loader_test.cpp — the plugin loader in-process: validation of every descriptor rule,
// translation of traits and statuses, the message buffer, workspaces, and the real fault libraries of
// tests/plugin/fixtures (loaded with dlopen). Conversion kernels: tests/plugin/conversion_test.cpp.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/codes.hpp"
#include "kernels/device/device_api.hpp"
#include "plugin/fpcert_plugin.h"
#include "plugin/loader.hpp"
#include "tests/support/plugin_checks.hpp"

using namespace fpcert;

namespace {

const std::string kDir = FPCERT_TEST_PLUGIN_DIR;

// ---- an in-process plugin whose behaviour each test sets ----------------------------------------

struct Behaviour {
  fpcert_status can_implement = FPCERT_STATUS_OK;
  fpcert_status run = FPCERT_STATUS_OK;
  const char* message = nullptr;
  size_t workspace = 0;
  // what the plugin saw
  int runs = 0;
  fpcert_gemm_args seen{};
  void* seen_workspace = nullptr;
  size_t seen_workspace_bytes = 0;
  void* seen_stream = reinterpret_cast<void*>(1);
  size_t seen_capacity = 0;
};

fpcert_status can_implement_fn(void* ud, const fpcert_gemm_shape*, char* msg, size_t cap) {
  auto* b = static_cast<Behaviour*>(ud);
  if (b->message) fpcert_plugin_set_message(msg, cap, b->message);
  return b->can_implement;
}

fpcert_status workspace_fn(void* ud, const fpcert_gemm_shape*, size_t* bytes, char*, size_t) {
  *bytes = static_cast<Behaviour*>(ud)->workspace;
  return FPCERT_STATUS_OK;
}

fpcert_status run_fn(void* ud, const fpcert_gemm_args* a, void* ws, size_t ws_bytes, void* stream, char* msg, size_t cap) {
  auto* b = static_cast<Behaviour*>(ud);
  ++b->runs;
  b->seen = *a;
  b->seen_workspace = ws;
  b->seen_workspace_bytes = ws_bytes;
  b->seen_stream = stream;
  b->seen_capacity = cap;
  if (ws) std::memset(ws, 0x5A, ws_bytes);  // the workspace must really hold ws_bytes
  if (b->message) fpcert_plugin_set_message(msg, cap, b->message);
  if (b->run != FPCERT_STATUS_OK) return b->run;
  auto* c = static_cast<float*>(a->c);
  for (std::int64_t i = 0; i < a->shape.m; ++i)
    for (std::int64_t j = 0; j < a->shape.n; ++j) c[i * a->ldc + j] = 1.0f;
  return FPCERT_STATUS_OK;
}

fpcert_kernel gemm_kernel(const char* name, Behaviour* b) {
  fpcert_kernel k = test::host_gemm_kernel(name, FPCERT_FORMAT_F16, FPCERT_FORMAT_F32, FPCERT_FORMAT_F32, run_fn, b);
  k.description = "in-process test kernel";
  k.gemm_can_implement = can_implement_fn;
  k.gemm_workspace_bytes = workspace_fn;
  return k;
}

fpcert_plugin_info table(const fpcert_kernel* ks, std::uint32_t n) {
  return fpcert_plugin_info{FPCERT_PLUGIN_INFO_HEADER, "in-process", "0", n, 0, ks};
}

std::string all(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

/// Exactly one problem, and it mentions every fragment.
void expect_one(const std::vector<std::string>& errs, std::initializer_list<const char*> fragments) {
  INFO(all(errs));
  REQUIRE(errs.size() == 1);
  for (const char* f : fragments) CHECK(errs[0].find(f) != std::string::npos);
}

/// A one-kernel table of an older minor: the kernel's first `size` bytes (all a plugin of that minor has) in `bytes`
/// (static in the caller: a registered kernel points into it), its struct_size, the table's minor and stride.
fpcert_plugin_info older_table(const fpcert_plugin_info& info, fpcert_kernel k, std::uint32_t minor, std::size_t size,
                               std::vector<unsigned char>& bytes) {
  k.struct_size = static_cast<std::uint32_t>(size);
  bytes.assign(size, 0);
  std::memcpy(bytes.data(), &k, size);
  fpcert_plugin_info old = info;
  old.abi_minor = minor;
  old.kernel_struct_size = static_cast<std::uint32_t>(size);
  old.kernels = reinterpret_cast<const fpcert_kernel*>(bytes.data());
  return old;
}

int unique_id = 0;
std::string fresh(const char* stem) { return std::string(stem) + "_" + std::to_string(++unique_id); }

}  // namespace

TEST_CASE("a valid table validates - and each broken field is named with its problem") {
  Behaviour b;
  const std::string name = fresh("valid");
  fpcert_kernel k = gemm_kernel(name.c_str(), &b);
  fpcert_plugin_info info = table(&k, 1);
  CHECK(validate_plugin_info(&info, "t").empty());

  SUBCASE("unknown format value, with the valid list and both ABI versions") {
    k.gemm.acc_format = 42;
    expect_one(validate_plugin_info(&info, "t"), {"gemm.acc_format", "unknown format value 42", "2 f32"});
    info.abi_minor = FPCERT_PLUGIN_ABI_MINOR + 1;  // from a newer minor: the versions explain the unknown value
    const std::string both = fmt::format("this fpcert speaks plugin ABI 1.{}; the plugin was built against 1.{}", FPCERT_PLUGIN_ABI_MINOR,
                                         FPCERT_PLUGIN_ABI_MINOR + 1);
    expect_one(validate_plugin_info(&info, "t"), {"unknown format value 42", both.c_str()});
  }
  SUBCASE("format NONE where one is required") {
    k.gemm.out_format = FPCERT_FORMAT_NONE;
    expect_one(validate_plugin_info(&info, "t"), {"gemm.out_format", "required"});
  }
  SUBCASE("ue8m0 is a conversion-only format") {
    k.gemm.a_input = FPCERT_FORMAT_UE8M0;
    expect_one(validate_plugin_info(&info, "t"), {"gemm.a_input", "ue8m0"});
  }
  SUBCASE("exact products carry no product format") {
    k.gemm.product_format = FPCERT_FORMAT_F16;
    expect_one(validate_plugin_info(&info, "t"), {"product_format", "exact_products is 1"});
  }
  SUBCASE("rounded products need a product format") {
    k.gemm.exact_products = 0;
    expect_one(validate_plugin_info(&info, "t"), {"product_format", "required when exact_products is 0"});
  }
  SUBCASE("exact_products is a boolean") {
    k.gemm.exact_products = 2;
    expect_one(validate_plugin_info(&info, "t"), {"exact_products must be 0 or 1"});
  }
  SUBCASE("promotion needs a promote format, and no promotion none") {
    k.gemm.promote_every = 128;
    expect_one(validate_plugin_info(&info, "t"), {"promote_format", "promote_every > 0"});
    k.gemm.promote_every = 0;
    k.gemm.promote_format = FPCERT_FORMAT_F32;
    expect_one(validate_plugin_info(&info, "t"), {"promote_format must be FPCERT_FORMAT_NONE"});
  }
  SUBCASE("negative promotion interval") {
    k.gemm.promote_every = -1;
    expect_one(validate_plugin_info(&info, "t"), {"promote_every must be >= 0"});
  }
  SUBCASE("the operation order must be stated") {
    k.gemm.order = "";
    expect_one(validate_plugin_info(&info, "t"), {"gemm.order is empty"});
  }
  SUBCASE("stochastic input rounding is refused; a stochastic accumulator is allowed") {
    k.gemm.acc_rounding = FPCERT_ROUNDING_STOCHASTIC;
    CHECK(validate_plugin_info(&info, "t").empty());
    k.gemm.input_rounding = FPCERT_ROUNDING_STOCHASTIC;
    expect_one(validate_plugin_info(&info, "t"), {"gemm.input_rounding", "stochastic"});
  }
  SUBCASE("unknown rounding value") {
    k.gemm.acc_rounding = 0;
    expect_one(validate_plugin_info(&info, "t"), {"gemm.acc_rounding", "unknown rounding value 0"});
  }
  SUBCASE("split operands must state their derivation") {
    k.gemm.operand_u = 0x1p-22;
    expect_one(validate_plugin_info(&info, "t"), {"operand_note is required"});
    k.gemm.operand_note = "3xTF32: 2^-22";
    CHECK(validate_plugin_info(&info, "t").empty());
    // operand_u may not exceed what the operand formats imply (a wider bound than the formats allow).
    k.gemm.operand_u = 0.01;
    expect_one(validate_plugin_info(&info, "t"), {"operand_u = 0.01 exceeds the unit roundoff"});
  }
  SUBCASE("run is required") {
    k.gemm_run = nullptr;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_run is NULL"});
  }
  SUBCASE("unknown memory space and operation") {
    k.memory = 7;
    expect_one(validate_plugin_info(&info, "t"), {"memory: unknown value 7"});
    k.memory = FPCERT_MEMORY_HOST;
    k.operation = 9;  // 4 softmax and 5 norm since minor 6, 6 attention and 7 attention_bwd since minor 10, 8 elementwise since 11
    expect_one(validate_plugin_info(&info, "t"), {"operation: unknown value 9", "3 reduction, 4 softmax, 5 norm, 6 attention, 7 attention_bwd, 8 elementwise"});
  }
  SUBCASE("names: characters, duplicates within the plugin, clashes with built-ins") {
    k.name = "has space";
    expect_one(validate_plugin_info(&info, "t"), {"name must be"});
    k.name = "model_gemm_f32";  // a built-in CPU model
    expect_one(validate_plugin_info(&info, "t"), {"already taken by a built-in kernel"});
    fpcert_kernel two[2] = {gemm_kernel(name.c_str(), &b), gemm_kernel(name.c_str(), &b)};
    fpcert_plugin_info info2 = table(two, 2);
    expect_one(validate_plugin_info(&info2, "t"), {"listed twice"});
  }
  SUBCASE("struct sizes") {
    k.struct_size = 8;
    expect_one(validate_plugin_info(&info, "t"), {"struct_size is 8"});
    k.struct_size = sizeof(fpcert_kernel);
    info.kernel_struct_size = 16;
    expect_one(validate_plugin_info(&info, "t"), {"kernel_struct_size is 16"});
  }
  SUBCASE("another ABI major: one message naming both versions, nothing else read") {
    info.abi_major = FPCERT_PLUGIN_ABI_MAJOR + 1;
    info.abi_minor = 3;
    info.kernels = nullptr;  // must not be touched
    const std::string host = fmt::format("ABI 1.{}", FPCERT_PLUGIN_ABI_MINOR);
    expect_one(validate_plugin_info(&info, "t"), {"ABI 2.3", host.c_str(), "rebuild"});
  }
  SUBCASE("the order: required from minor 1, each kind's fields checked") {
    k.gemm_order.kind = 0;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_order.kind", "required", "FPCERT_ORDER_UNKNOWN"});
    k.gemm_order.kind = 9;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_order.kind", "unknown value 9"});
    k.gemm_order.kind = FPCERT_ORDER_SEQUENTIAL;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_order.step", "required"});
    k.gemm_order.step = FPCERT_STEP_FMA;
    CHECK(validate_plugin_info(&info, "t").empty());
    k.gemm_order.kind = FPCERT_ORDER_SPLIT_K;
    k.gemm_order.outer = FPCERT_COMBINE_SEQUENTIAL;
    k.gemm_order.splits = 1;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_order", "splits >= 2"});
    k.gemm_order.splits = 4;
    CHECK(validate_plugin_info(&info, "t").empty());
    k.gemm_order = {};
    k.gemm_order.kind = FPCERT_ORDER_TENSOR_CORE_BLOCK;
    k.gemm_order.block = 16;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_order.block_rounding", "required"});
    k.gemm_order.block_rounding = FPCERT_ROUNDING_TOWARD_ZERO;
    CHECK(validate_plugin_info(&info, "t").empty());
    k.gemm_order = {};
    k.gemm_order.kind = FPCERT_ORDER_SPLIT_PRODUCTS;
    k.gemm_order.term_order = FPCERT_ORDER_SEQUENTIAL;
    k.gemm_order.split_scheme = "4xfoo";
    expect_one(validate_plugin_info(&info, "t"), {"unknown split scheme '4xfoo'"});
  }
  SUBCASE("a minor 0 table (kernels end before gemm_order) loads; its kernels read as order unknown") {
    // A minor-0 plugin's kernel table: the kernel at the shorter stride (static: the registry keeps it).
    static std::vector<unsigned char> bytes(2 * FPCERT_KERNEL_SIZE_MINOR0, 0);
    static const std::string oldname = fresh("minor0");
    fpcert_kernel k0 = k;
    k0.name = oldname.c_str();
    k0.struct_size = FPCERT_KERNEL_SIZE_MINOR0;
    k0.gemm_order.kind = 0;  // not part of a minor 0 kernel: never read
    std::memcpy(bytes.data(), &k0, FPCERT_KERNEL_SIZE_MINOR0);
    fpcert_plugin_info old = info;
    old.abi_minor = 0;
    old.kernel_struct_size = FPCERT_KERNEL_SIZE_MINOR0;
    old.kernel_count = 1;
    old.kernels = reinterpret_cast<const fpcert_kernel*>(bytes.data());
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor0");
    CHECK(make_gemm_kernel(oldname)->traits().sum_order.kind == OrderKind::Unknown);
    old.kernel_struct_size = sizeof(fpcert_kernel);  // a minor 0 table cannot have minor 1's stride
    expect_one(validate_plugin_info(&old, "t"), {"kernel_struct_size", "for ABI 1.0"});
  }
  SUBCASE("layouts (minor 4): a minor 3 table loads as row-major only; gemm_layouts is read, unknown bits refused") {
    // A minor-3 kernel ends before gemm_layouts: the bits set in the full struct are cut off and never read.
    static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR3, 0);
    static const std::string oldname = fresh("minor3");
    fpcert_kernel k3 = k;
    k3.name = oldname.c_str();
    k3.gemm_layouts = FPCERT_LAYOUTS_ALL;  // beyond a minor 3 kernel: never read
    const fpcert_plugin_info old = older_table(info, k3, 3, FPCERT_KERNEL_SIZE_MINOR3, bytes);
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor3");
    const auto k3k = make_gemm_kernel(oldname);
    CHECK(k3k->traits().layouts == kLayoutsRowMajor);
    CHECK(k3k->can_implement_layout({}).ok);
    CHECK_FALSE(k3k->can_implement_layout({Layout::ColMajor, Layout::RowMajor, Layout::RowMajor}).ok);
    // Minor 4: the mask as declared (A column-major with C row-major: bit 1 + 0 + 0 = 2^1).
    CHECK(FPCERT_LAYOUT_BIT(1, 0, 0) == 2u);
    CHECK(FPCERT_LAYOUT_BIT(1, 1, 1) == 0x80u);
    k.gemm_layouts = 0x100;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_layouts", "unknown bits 0x100"});
    static const std::string newname = fresh("minor4");
    static fpcert_kernel k4 = k;
    k4.name = newname.c_str();
    k4.gemm_layouts = FPCERT_LAYOUTS_AB_ANY;
    static fpcert_plugin_info i4 = table(&k4, 1);
    CHECK(validate_plugin_info(&i4, "t").empty());
    register_plugin_info(&i4, "minor4");
    const auto k4k = make_gemm_kernel(newname);
    CHECK(k4k->traits().layouts == kLayoutsAnyAB);
    CHECK(k4k->can_implement_layout({Layout::ColMajor, Layout::ColMajor, Layout::RowMajor}).ok);
    const Support no = k4k->can_implement_layout({Layout::RowMajor, Layout::RowMajor, Layout::ColMajor});
    CHECK_FALSE(no.ok);
    CHECK(no.reason.find("nn/c_col") != std::string::npos);
  }
  SUBCASE("alpha/beta (minor 5): a minor 4 table loads without it; gemm_alpha_beta is read, values above 1 refused") {
    // A minor-4 kernel ends before gemm_alpha_beta: the flag set in the full struct is cut off and never read.
    static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR4, 0);
    static const std::string oldname = fresh("minor4ab");
    fpcert_kernel k4 = k;
    k4.name = oldname.c_str();
    k4.gemm_alpha_beta = 1;  // beyond a minor 4 kernel: never read
    const fpcert_plugin_info old = older_table(info, k4, 4, FPCERT_KERNEL_SIZE_MINOR4, bytes);
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor4ab");
    CHECK_FALSE(make_gemm_kernel(oldname)->traits().alpha_beta);
    k.gemm_alpha_beta = 2;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_alpha_beta = 2"});
    static const std::string newname = fresh("minor5");
    static fpcert_kernel k5 = k;
    k5.name = newname.c_str();
    k5.gemm_alpha_beta = 1;
    static fpcert_plugin_info i5 = table(&k5, 1);
    CHECK(validate_plugin_info(&i5, "t").empty());
    register_plugin_info(&i5, "minor5");
    CHECK(make_gemm_kernel(newname)->traits().alpha_beta);
  }
  SUBCASE("strided batches (minor 7): a minor 6 table loads without them; gemm_batched is read, values above 1 refused") {
    // A minor-6 kernel ends before gemm_batched: the flag set in the full struct is cut off and never read.
    static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR6, 0);
    static const std::string oldname = fresh("minor6b");
    fpcert_kernel k6 = k;
    k6.name = oldname.c_str();
    k6.gemm_batched = 1;  // beyond a minor 6 kernel: never read
    const fpcert_plugin_info old = older_table(info, k6, 6, FPCERT_KERNEL_SIZE_MINOR6, bytes);
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor6b");
    CHECK_FALSE(make_gemm_kernel(oldname)->traits().batched);
    k.gemm_batched = 3;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_batched = 3"});
    static const std::string newname = fresh("minor7");
    static fpcert_kernel k7 = k;
    k7.name = newname.c_str();
    k7.gemm_batched = 1;
    static fpcert_plugin_info i7 = table(&k7, 1);
    CHECK(validate_plugin_info(&i7, "t").empty());
    register_plugin_info(&i7, "minor7");
    CHECK(make_gemm_kernel(newname)->traits().batched);
    // The minor 6 stride the loader expects is the header's, and the batch fields follow gemm_args' minor 5 ones.
    CHECK(FPCERT_KERNEL_SIZE_MINOR6 + 2 * sizeof(std::int32_t) == FPCERT_KERNEL_SIZE_MINOR7);
    CHECK(offsetof(fpcert_gemm_args, batch) == offsetof(fpcert_gemm_args, c_in) + sizeof(const void*));
  }
  SUBCASE("fused epilogues (minor 8): a minor 7 table loads without them, its older fields still read; each field is read") {
    // A minor-7 kernel ends before gemm_epilogue: a declaration set in the full struct is cut off and never read. Its
    // determinism (minor 2) is still read: a table of any minor after 2 carries it.
    static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR7, 0);
    static const std::string oldname = fresh("minor7e");
    fpcert_kernel k7 = k;
    k7.name = oldname.c_str();
    k7.determinism = FPCERT_RUN_TO_RUN;  // coherent with the order unknown
    k7.gemm_batched = 1;
    k7.gemm_epilogue.activations = 0xFFFFu;  // beyond a minor 7 kernel: never read, so never refused
    const fpcert_plugin_info old = older_table(info, k7, 7, FPCERT_KERNEL_SIZE_MINOR7, bytes);
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor7e");
    const KernelTraits t7 = make_gemm_kernel(oldname)->traits();
    CHECK_FALSE(t7.epilogue.active());
    CHECK(t7.batched);
    CHECK(t7.determinism == Determinism::RunToRun);
    // A minor 8 declaration: bias per column in bf16, ReLU and GELU (tanh) with tanhf's 2 ulp, amax.
    fpcert_gemm_epilogue_traits& e = k.gemm_epilogue;
    e.bias_kinds = FPCERT_EPILOGUE_BIT(FPCERT_BIAS_COLUMN);
    e.bias_format = FPCERT_FORMAT_BF16;
    e.activations = FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_RELU) | FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_GELU_TANH);
    e.func_rel_err = std::ldexp(1.0, -22);
    e.func_note = "tanhf: 2 ulp";
    e.amax = 1;
    REQUIRE(validate_plugin_info(&info, "t").empty());
    static const std::string newname = fresh("minor8");
    static fpcert_kernel k8 = k;
    k8.name = newname.c_str();
    static fpcert_plugin_info i8 = table(&k8, 1);
    register_plugin_info(&i8, "minor8");
    const EpilogueTraits t8 = make_gemm_kernel(newname)->traits().epilogue;
    CHECK(t8.bias == bit(BiasKind::PerColumn));
    REQUIRE(t8.bias_format);
    CHECK(*t8.bias_format == bf16);
    CHECK(t8.activations == (bit(Activation::Relu) | bit(Activation::GeluTanh)));
    CHECK(t8.func_rel_err == std::ldexp(1.0, -22));
    CHECK(t8.func_note == "tanhf: 2 ulp");
    CHECK((t8.amax && !t8.fp8_scaling && !t8.round_before_act));
    CHECK(describe_traits(make_gemm_kernel(newname)->traits()).find("gelu_tanh") != std::string::npos);
    // Each bad declaration: one problem, named.
    auto refused = [&](void (*edit)(fpcert_gemm_epilogue_traits&), std::initializer_list<const char*> fragments) {
      fpcert_kernel x = k;
      edit(x.gemm_epilogue);
      const fpcert_plugin_info ix = table(&x, 1);
      expect_one(validate_plugin_info(&ix, "t"), fragments);
    };
    refused([](fpcert_gemm_epilogue_traits& x) { x.activations |= 1u << 7; },
            {"gemm_epilogue.activations: unknown bits 0x80", "gelu_tanh 0x8", "silu 0x10"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.bias_kinds |= 0x8; }, {"gemm_epilogue.bias_kinds: unknown bits 0x8", "column 0x4"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.func_rel_err = -1e-7; }, {"func_rel_err = -1e-07", "[0, 1)"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.func_rel_err = std::nan(""); }, {"func_rel_err = nan", "[0, 1)"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.func_rel_err = 1; }, {"func_rel_err = 1", "[0, 1)"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.func_rel_err = 0; }, {"func_rel_err is required (> 0) with GELU or SiLU"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.activations = FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_RELU); },
            {"must be 0 when neither GELU nor SiLU"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.func_note = nullptr; }, {"func_note is required"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.bias_format = 42; }, {"gemm_epilogue.bias_format: unknown format value 42", "2 f32"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.bias_format = FPCERT_FORMAT_UE8M0; }, {"bias_format: ue8m0 is a scale format"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.bias_kinds = 0; }, {"bias_format must be FPCERT_FORMAT_NONE when no bias kind"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.fp8_scaling = 3; }, {"gemm_epilogue.fp8_scaling = 3: 0, 1 or (ABI minor 10) 2"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.round_before_act = -1; }, {"gemm_epilogue.round_before_act = -1: 0 or 1"});
    refused([](fpcert_gemm_epilogue_traits& x) { x.amax = 3; }, {"gemm_epilogue.amax = 3: 0 or 1"});
    // Bit 0 (NONE) is implied and allowed; NONE as the bias format is the output format.
    e.activations |= FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_NONE);
    e.bias_format = FPCERT_FORMAT_NONE;
    CHECK(validate_plugin_info(&info, "t").empty());
    // A bit from a newer minor names both versions.
    e.activations |= 1u << 9;
    info.abi_minor = FPCERT_PLUGIN_ABI_MINOR + 1;
    expect_one(validate_plugin_info(&info, "t"), {"unknown bits 0x200", "this fpcert speaks plugin ABI"});
    // The minor 7 stride the loader expects is the header's, and the call's epilogue follows the batch fields.
    CHECK(FPCERT_KERNEL_SIZE_MINOR7 + sizeof(fpcert_gemm_epilogue_traits) == FPCERT_KERNEL_SIZE_MINOR8);
    CHECK(offsetof(fpcert_gemm_args, epilogue) == offsetof(fpcert_gemm_args, stride_c) + sizeof(std::int64_t));
  }
  SUBCASE("the rounding before the bias (minor 9): read, refused when not 0/1 or without a bias; a minor 8 table reads 0") {
    fpcert_gemm_epilogue_traits& e = k.gemm_epilogue;
    e.bias_kinds = FPCERT_EPILOGUE_BIT(FPCERT_BIAS_COLUMN);
    e.activations = FPCERT_EPILOGUE_BIT(FPCERT_ACTIVATION_RELU);
    k.gemm_alpha_beta = 1;
    k.gemm_round_before_bias = 1;
    REQUIRE(validate_plugin_info(&info, "t").empty());
    static const std::string newname = fresh("minor9");
    static fpcert_kernel k9 = k;
    k9.name = newname.c_str();
    static fpcert_plugin_info i9 = table(&k9, 1);
    register_plugin_info(&i9, "minor9");
    const EpilogueTraits t9 = make_gemm_kernel(newname)->traits().epilogue;
    CHECK(t9.round_before_bias);
    CHECK(describe_epilogue(t9).find("before the bias") != std::string::npos);
    // A minor 8 kernel ends before the field: a value set in the full struct is cut off, never read (never refused).
    static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR8, 0);
    static const std::string oldname = fresh("minor8b");
    fpcert_kernel k8 = k;
    k8.name = oldname.c_str();
    k8.gemm_round_before_bias = 7;
    const fpcert_plugin_info old = older_table(info, k8, 8, FPCERT_KERNEL_SIZE_MINOR8, bytes);
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor8b");
    CHECK_FALSE(make_gemm_kernel(oldname)->traits().epilogue.round_before_bias);
    k.gemm_round_before_bias = 2;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_round_before_bias = 2: 0 or 1"});
    k.gemm_round_before_bias = 1;
    e.bias_kinds = 0;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_round_before_bias = 1 without a bias"});
    e.bias_kinds = FPCERT_EPILOGUE_BIT(FPCERT_BIAS_COLUMN);
    k.reserved_minor9 = 5;
    expect_one(validate_plugin_info(&info, "t"), {"reserved_minor9 = 5"});
    CHECK(FPCERT_KERNEL_SIZE_MINOR8 + 2 * sizeof(std::int32_t) == FPCERT_KERNEL_SIZE_MINOR9);
  }
  SUBCASE("shape multiples and FP8 scaling without scale_d (minor 10): read, refused out of range; a minor 9 table reads neither") {
    fpcert_gemm_epilogue_traits& e = k.gemm_epilogue;
    e.fp8_scaling = 2;
    k.gemm_shape_multiple = 16;
    REQUIRE(validate_plugin_info(&info, "t").empty());
    static const std::string newname = fresh("minor10");
    static fpcert_kernel k10 = k;
    k10.name = newname.c_str();
    static fpcert_plugin_info i10 = table(&k10, 1);
    register_plugin_info(&i10, "minor10");
    const auto kern = make_gemm_kernel(newname);
    CHECK(kern->traits().shape_multiple == 16);
    CHECK(kern->traits().epilogue.fp8_scaling);
    CHECK_FALSE(kern->traits().epilogue.fp8_scale_d);
    // The runner's question: a shape that is no multiple of 16 is declined before the plugin is asked.
    CHECK_FALSE(kern->can_implement_shape(32, 48, 24).ok);
    CHECK(kern->can_implement_shape(32, 48, 64).reason.empty());
    // A minor 9 kernel ends before gemm_shape_multiple: cut off, never read; fp8_scaling = 2 is a minor 10 value.
    static std::vector<unsigned char> bytes(FPCERT_KERNEL_SIZE_MINOR9, 0);
    static const std::string oldname = fresh("minor9b");
    fpcert_kernel k9 = k;
    k9.name = oldname.c_str();
    e.fp8_scaling = 1;
    k9.gemm_epilogue.fp8_scaling = 1;
    const fpcert_plugin_info old = older_table(info, k9, 9, FPCERT_KERNEL_SIZE_MINOR9, bytes);
    CHECK(validate_plugin_info(&old, "t").empty());
    register_plugin_info(&old, "minor9b");
    CHECK(make_gemm_kernel(oldname)->traits().shape_multiple == 1);
    CHECK(make_gemm_kernel(oldname)->traits().epilogue.fp8_scale_d);
    k9.gemm_epilogue.fp8_scaling = 2;
    const std::string other = fresh("minor9c");
    k9.name = other.c_str();
    std::vector<unsigned char> bytes2(FPCERT_KERNEL_SIZE_MINOR9, 0);
    const fpcert_plugin_info old2 = older_table(info, k9, 9, FPCERT_KERNEL_SIZE_MINOR9, bytes2);
    expect_one(validate_plugin_info(&old2, "t"), {"gemm_epilogue.fp8_scaling = 2: 0, 1 or (ABI minor 10) 2"});
    k.gemm_shape_multiple = 5000;
    expect_one(validate_plugin_info(&info, "t"), {"gemm_shape_multiple = 5000: 0 (any shape) or in [1, 4096]"});
    k.gemm_shape_multiple = 0;
    k.reserved_minor10 = 3;
    expect_one(validate_plugin_info(&info, "t"), {"reserved_minor10 = 3"});
    CHECK(offsetof(fpcert_kernel, reserved_minor10) + sizeof(std::int32_t) == FPCERT_KERNEL_SIZE_MINOR10);  // minor 11 appends after it
  }
  SUBCASE("a newer minor is accepted") {
    info.abi_minor = FPCERT_PLUGIN_ABI_MINOR + 1;
    CHECK(validate_plugin_info(&info, "t").empty());
  }
  SUBCASE("no kernels, no name") {
    info.kernel_count = 0;
    expect_one(validate_plugin_info(&info, "t"), {"lists no kernels"});
    info.kernel_count = 1;
    info.plugin_name = "";
    expect_one(validate_plugin_info(&info, "t"), {"plugin_name is empty"});
  }
  SUBCASE("conversions: saturation must exist in the destination; no stochastic rounding") {
    fpcert_kernel c{};
    c.struct_size = sizeof(fpcert_kernel);
    c.operation = FPCERT_OPERATION_CONVERSION;
    c.name = "cvt_check";
    c.memory = FPCERT_MEMORY_HOST;
    c.conversion = {FPCERT_FORMAT_F32, FPCERT_FORMAT_E4M3, FPCERT_ROUNDING_NEAREST_EVEN, FPCERT_SATURATION_INF,
                    FPCERT_NAN_PRESERVE, 0};
    c.conversion_run = [](void*, const fpcert_conversion_args*, void*, char*, size_t) -> fpcert_status { return FPCERT_STATUS_OK; };
    fpcert_plugin_info ci = table(&c, 1);
    expect_one(validate_plugin_info(&ci, "t"), {"saturation inf is not possible for e4m3"});
    c.conversion.saturation = FPCERT_SATURATION_FINITE;
    CHECK(validate_plugin_info(&ci, "t").empty());
    c.conversion.rounding = FPCERT_ROUNDING_STOCHASTIC;
    expect_one(validate_plugin_info(&ci, "t"), {"conversion.rounding", "stochastic"});
    c.conversion.rounding = FPCERT_ROUNDING_NEAREST_EVEN;
    c.conversion.nan_payload = 0;
    expect_one(validate_plugin_info(&ci, "t"), {"nan_payload"});
    // The NaN conventions of ABI minor 2: each where its destination allows it, refused by name elsewhere.
    for (const std::int32_t v : {FPCERT_NAN_NVIDIA, FPCERT_NAN_ANY}) {
      c.conversion.nan_payload = v;
      CHECK(validate_plugin_info(&ci, "t").empty());  // f32 -> e4m3
    }
    c.conversion.nan_payload = FPCERT_NAN_ML_DTYPES;
    expect_one(validate_plugin_info(&ci, "t"), {"nan_payload ml_dtypes", "finite-only"});
    c.conversion.nan_payload = 6;
    expect_one(validate_plugin_info(&ci, "t"), {"unknown value 6", "3 nvidia, 4 any, 5 ml_dtypes"});
    c.conversion.dst_format = FPCERT_FORMAT_E2M1;
    c.conversion.nan_payload = FPCERT_NAN_ANY;
    expect_one(validate_plugin_info(&ci, "t"), {"nan_payload any", "e2m1 has no NaN"});
    c.conversion.nan_payload = FPCERT_NAN_ML_DTYPES;
    CHECK(validate_plugin_info(&ci, "t").empty());
    ci.abi_minor = 1;  // a minor 1 table knows only 1 and 2
#ifdef FPCERT_KERNEL_SIZE_MINOR1  // once minor 2 appends fields, a minor 1 kernel is shorter
    ci.kernel_struct_size = c.struct_size = FPCERT_KERNEL_SIZE_MINOR1;
#endif
    expect_one(validate_plugin_info(&ci, "t"), {"value 5 (ml_dtypes) needs plugin ABI minor 2", "built against 1.1"});
    ci.abi_minor = FPCERT_PLUGIN_ABI_MINOR;
    ci.kernel_struct_size = c.struct_size = sizeof(fpcert_kernel);
    c.conversion.dst_format = FPCERT_FORMAT_E4M3;
    c.conversion.nan_payload = FPCERT_NAN_PRESERVE;
    c.conversion_run = nullptr;
    expect_one(validate_plugin_info(&ci, "t"), {"conversion_run is NULL"});
  }
}

TEST_CASE("every ABI format maps to the fpcert format of the same tag - and back") {
  const char* tags[] = {"", "f64", "f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0"};
  for (std::int32_t v = 1; v <= FPCERT_FORMAT_UE8M0; ++v) {
    const Format* f = format_from_abi(v);
    REQUIRE(f);
    CHECK(f->tag == tags[v]);
    CHECK(format_to_abi(*f) == v);
  }
  CHECK(format_from_abi(0) == nullptr);
  CHECK(format_from_abi(FPCERT_FORMAT_UE8M0 + 1) == nullptr);
  CHECK(rounding_from_abi(FPCERT_ROUNDING_NEAREST_AWAY) == Rounding::NearestAway);
  CHECK(saturation_from_abi(FPCERT_SATURATION_FINITE) == Saturation::Finite);
}

TEST_CASE("a registered plugin kernel: traits - arguments - workspace - and statuses become verdicts") {
  static Behaviour b;
  b = Behaviour{};
  static const std::string name = fresh("wrapped");
  static fpcert_kernel k = gemm_kernel(name.c_str(), &b);
  k.gemm.promote_every = 64;
  k.gemm.promote_format = FPCERT_FORMAT_F32;
  k.gemm_order.kind = FPCERT_ORDER_BLOCKED_K;
  k.gemm_order.step = FPCERT_STEP_FMA;
  k.gemm_order.block = 64;
  k.gemm_order.inner = FPCERT_COMBINE_SEQUENTIAL;
  k.gemm_order.outer = FPCERT_COMBINE_PAIRWISE;
  static fpcert_plugin_info info = table(&k, 1);
  // Registered once: doctest re-enters this test case for each SUBCASE.
  static const std::vector<std::string> errors = validate_plugin_info(&info, "t");
  REQUIRE(errors.empty());
  static const PluginSummary s = register_plugin_info(&info, "in-process");
  REQUIRE(s.gemm_kernels == std::vector<std::string>{name});
  const KernelInfo* ki = find_kernel_info(name);
  REQUIRE(ki);
  CHECK(ki->backend == Backend::Plugin);
  CHECK(ki->origin == "in-process");
  auto kern = make_gemm_kernel(name);
  REQUIRE(kern);
  CHECK(kern->backend() == Backend::Plugin);
  CHECK(kern->memory() == MemorySpace::Host);
  const KernelTraits& t = kern->traits();
  CHECK(*t.a_input == f16);
  CHECK(*t.acc == f32);
  CHECK(t.exact_products);
  CHECK(t.promote_every == 64);
  CHECK(*t.promote_format == f32);
  CHECK(t.order == "fma along K");
  CHECK(order_spec(t.sum_order) == "blocked:block=64,inner=sequential,outer=pairwise,step=fma");

  // Buffers as the runner lays them out: C row-major with 3 padding columns.
  const std::int64_t m = 4, n = 5, kk = 6, ldc = n + 3;
  std::vector<std::uint16_t> A(static_cast<std::size_t>(m * kk)), B(static_cast<std::size_t>(kk * n));
  std::vector<float> C(static_cast<std::size_t>(m * ldc), -2.0f);
  GemmOperands ops;
  ops.m = m;
  ops.n = n;
  ops.k = kk;
  ops.a = A.data();
  ops.lda = kk;
  ops.b = B.data();
  ops.ldb = n;
  ops.c = C.data();
  ops.ldc = ldc;

  SUBCASE("arguments and workspace reach the plugin as declared") {
    b.workspace = 1000;
    CHECK(kern->can_implement(m, n, kk).ok);
    kern->run(ops);
    CHECK(b.runs == 1);
    CHECK(b.seen.struct_size == sizeof(fpcert_gemm_args));
    CHECK(b.seen.memory == FPCERT_MEMORY_HOST);
    CHECK(b.seen.a_format == FPCERT_FORMAT_F16);
    CHECK(b.seen.c_format == FPCERT_FORMAT_F32);
    CHECK(b.seen.shape.m == m);
    CHECK(b.seen.shape.n == n);
    CHECK(b.seen.shape.k == kk);
    CHECK(b.seen.shape.a_layout == FPCERT_LAYOUT_ROW_MAJOR);
    CHECK(b.seen.shape.c_layout == FPCERT_LAYOUT_ROW_MAJOR);
    CHECK(b.seen.lda == kk);
    CHECK(b.seen.ldc == ldc);
    CHECK(b.seen.c == C.data());
    CHECK(b.seen_workspace != nullptr);
    CHECK(b.seen_workspace_bytes == 1000);
    CHECK(b.seen_stream == nullptr);
    CHECK(b.seen_capacity >= 256);
    CHECK(C[0] == 1.0f);
    CHECK(C[static_cast<std::size_t>(n)] == -2.0f);  // padding untouched by an honest kernel
    b.workspace = 0;
    kern->run(ops);
    CHECK(b.seen_workspace == nullptr);
  }
  SUBCASE("can_implement NOT_SUPPORTED is the verdict 'not supported', with the plugin's reason") {
    b.can_implement = FPCERT_STATUS_NOT_SUPPORTED;
    b.message = "odd K only";
    const Support sup = kern->can_implement(m, n, kk);
    CHECK_FALSE(sup.ok);
    CHECK(sup.reason.find("odd K only") != std::string::npos);
    CHECK(sup.reason.find("m=4 n=5 k=6") != std::string::npos);
  }
  SUBCASE("a failing can_implement is not 'not supported': run() reports the failure") {
    b.can_implement = FPCERT_STATUS_INTERNAL;
    b.message = "table corrupt";
    CHECK(kern->can_implement(m, n, kk).ok);
    try {
      kern->run(ops);
      FAIL("run() should have thrown DeviceError");
    } catch (const DeviceError& e) {
      CHECK(std::string(e.what()).find("gemm_can_implement() returned INTERNAL (3): table corrupt") != std::string::npos);
    }
    CHECK(b.runs == 0);  // the plugin's run was never called
    b.can_implement = FPCERT_STATUS_OK;
    CHECK(kern->can_implement(m, n, kk).ok);
    kern->run(ops);  // the next case starts clean
    CHECK(b.runs == 1);
  }
  SUBCASE("run NOT_SUPPORTED → NotSupportedError; other statuses → DeviceError with the plugin's message") {
    b.run = FPCERT_STATUS_NOT_SUPPORTED;
    b.message = "ldc too large";
    CHECK_THROWS_AS(kern->run(ops), NotSupportedError);
    for (fpcert_status st : std::initializer_list<fpcert_status>{FPCERT_STATUS_INVALID_ARGUMENT, FPCERT_STATUS_INTERNAL, FPCERT_STATUS_DEVICE_ERROR,
                             FPCERT_STATUS_OUT_OF_MEMORY, fpcert_status{77}}) {
      b.run = st;
      b.message = "launch failed: too many resources";
      try {
        kern->run(ops);
        FAIL("run() should have thrown");
      } catch (const NotSupportedError&) {
        FAIL("a failure must not become 'not supported'");
      } catch (const DeviceError& e) {
        const std::string w = e.what();
        CHECK(w.find(name) != std::string::npos);
        CHECK(w.find(std::string(status_name(st))) != std::string::npos);
        CHECK(w.find("launch failed: too many resources") != std::string::npos);
      }
    }
  }
  SUBCASE("a message longer than the buffer is truncated and terminated") {
    static std::string huge(10000, 'x');
    b.run = FPCERT_STATUS_INTERNAL;
    b.message = huge.c_str();
    try {
      kern->run(ops);
    } catch (const DeviceError& e) {
      const std::string w = e.what();
      CHECK(w.size() < 4000);
      CHECK(w.find(std::string(b.seen_capacity - 1, 'x')) != std::string::npos);
    }
  }
}

TEST_CASE("fpcert_plugin_set_message truncates and always terminates") {
  char buf[5];
  std::memset(buf, '#', sizeof buf);
  fpcert_plugin_set_message(buf, sizeof buf, "abcdefgh");
  CHECK(std::string(buf) == "abcd");
  fpcert_plugin_set_message(buf, sizeof buf, nullptr);
  CHECK(std::string(buf).empty());
  fpcert_plugin_set_message(buf, 0, "x");  // no capacity: nothing written, no crash
}

// ---- real libraries (tests/plugin/fixtures) --------------------------------------------------------------------

namespace {

std::string load_error(const std::string& file) {
  try {
    load_plugin(kDir + "/" + file);
  } catch (const PluginError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("libraries that cannot be used are refused with a message naming the library and the problem") {
  std::string e = load_error("libfault_not_elf.so");
  CHECK(e.find("libfault_not_elf.so") != std::string::npos);
  CHECK(e.find("cannot be loaded") != std::string::npos);

  e = load_error("libfault_missing_dep.so");
  CHECK(e.find("libfpcert_test_missing_dep.so") != std::string::npos);  // dlerror names the missing library

  e = load_error("libfault_no_symbol.so");
  CHECK(e.find("does not export fpcert_plugin_enumerate()") != std::string::npos);

  e = load_error("libfault_abi_major.so");
  CHECK(e.find("ABI 2.0") != std::string::npos);
  CHECK(e.find(fmt::format("ABI 1.{}", FPCERT_PLUGIN_ABI_MINOR)) != std::string::npos);

  e = load_error("libfault_enum_null.so");
  CHECK(e.find("returned NULL") != std::string::npos);
  CHECK(e.find("simulated missing driver") != std::string::npos);

  e = load_error("libfault_bad_traits.so");
  CHECK(e.find("3 problems") != std::string::npos);
  CHECK(e.find("unknown format value 99") != std::string::npos);
  CHECK(e.find("gemm.order is empty") != std::string::npos);
  CHECK(e.find("promote_format") != std::string::npos);

  e = load_error("libno_such_plugin.so");
  CHECK(e.find("no such file") != std::string::npos);

  CHECK(make_gemm_kernel("fault_bad_traits") == nullptr);  // nothing of a refused plugin is registered
}

TEST_CASE("a C++ exception thrown by a plugin never unwinds into fpcert: the process terminates") {
  load_plugin(kDir + "/libfault_throw.so");
  auto k = make_gemm_kernel("fault_throw");
  REQUIRE(k);
  std::vector<std::uint16_t> A(2 * 1024), B(1024 * 2);
  std::vector<float> C(2 * 2);
  GemmOperands ops;
  ops.m = 2;
  ops.n = 2;
  ops.k = 1024;  // the fault's shape
  ops.a = A.data();
  ops.lda = 1024;
  ops.b = B.data();
  ops.ldb = 2;
  ops.c = C.data();
  ops.ldc = 2;
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGABRT, SIG_DFL);  // doctest's crash handler is the parent's business
    // If the exception crossed the boundary, this catch would see it and exit 0.
    try {
      k->run(ops);
    } catch (...) {
      ::_exit(0);
    }
    ::_exit(1);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  REQUIRE(WIFSIGNALED(st));
  CHECK(WTERMSIG(st) == SIGABRT);
  // The same kernel on another shape is honest and returns normally.
  ops.k = 8;
  ops.lda = 8;
  CHECK_NOTHROW(k->run(ops));
}

TEST_CASE("a plugin kernel with an epilogue (minor 8) gets the call's bias - activation - scales and amax; one without is never asked") {
  static Behaviour b;
  b = Behaviour{};
  static const std::string name = fresh("epilogue"), plain = fresh("no_epilogue");
  static fpcert_kernel ks[2] = {gemm_kernel(name.c_str(), &b), gemm_kernel(plain.c_str(), &b)};
  fpcert_gemm_epilogue_traits& e = ks[0].gemm_epilogue;
  e.bias_kinds = FPCERT_BIAS_KINDS_ALL;
  e.activations = FPCERT_ACTIVATIONS_ALL;
  e.func_rel_err = std::ldexp(1.0, -22);
  e.func_note = "erff, tanhf, expf: 2 ulp";
  e.fp8_scaling = 1;
  e.amax = 1;
  static fpcert_plugin_info info = table(ks, 2);
  static const std::vector<std::string> errors = validate_plugin_info(&info, "t");  // registered once (SUBCASE re-entry)
  REQUIRE(errors.empty());
  static const PluginSummary s = register_plugin_info(&info, "in-process");
  REQUIRE(s.gemm_kernels.size() == 2);
  const std::int64_t m = 3, n = 4, kk = 5;
  std::vector<std::uint16_t> A(static_cast<std::size_t>(m * kk)), B(static_cast<std::size_t>(kk * n));
  std::vector<float> C(static_cast<std::size_t>(m * n)), bias(static_cast<std::size_t>(n)), amax(1, -1.0f);
  GemmOperands ops;
  ops.m = m, ops.n = n, ops.k = kk;
  ops.a = A.data(), ops.lda = kk, ops.b = B.data(), ops.ldb = n, ops.c = C.data(), ops.ldc = n;
  SUBCASE("every field reaches the plugin, translated into the ABI's values") {
    auto kern = make_gemm_kernel(name);
    for (const auto& [ours, abi] : {std::pair<Activation, std::int32_t>{Activation::Relu, FPCERT_ACTIVATION_RELU}, {Activation::GeluErf, FPCERT_ACTIVATION_GELU_ERF},
                                    {Activation::GeluTanh, FPCERT_ACTIVATION_GELU_TANH}, {Activation::Silu, FPCERT_ACTIVATION_SILU}}) {
      ops.bias_kind = ours == Activation::Relu ? BiasKind::PerRow : BiasKind::PerColumn;
      ops.bias = bias.data();
      ops.activation = ours;
      ops.scale_a = 0.75, ops.scale_b = 3.0, ops.scale_d = 0.125;
      ops.amax = amax.data();
      kern->run(ops);
      const fpcert_gemm_epilogue_args& got = b.seen.epilogue;
      CHECK(got.bias_kind == (ours == Activation::Relu ? FPCERT_BIAS_ROW : FPCERT_BIAS_COLUMN));
      CHECK(got.bias == bias.data());
      CHECK(got.activation == abi);
      CHECK((got.scale_a == 0.75 && got.scale_b == 3.0 && got.scale_d == 0.125));
      CHECK(got.amax == amax.data());
    }
    // No epilogue asked: NONE, NULL and scales 1 (what every kernel of minor 8 gets on the plain cases).
    kern->run(GemmOperands{ops.m, ops.n, ops.k, A.data(), kk, Layout::RowMajor, B.data(), n, Layout::RowMajor, C.data(), n});
    const fpcert_gemm_epilogue_args& none = b.seen.epilogue;
    CHECK((none.bias_kind == FPCERT_BIAS_NONE && none.activation == FPCERT_ACTIVATION_NONE && !none.bias && !none.amax));
    CHECK((none.scale_a == 1 && none.scale_b == 1 && none.scale_d == 1));
  }
  SUBCASE("a kernel that declares no epilogue is refused such a call ('not supported') and never called") {
    auto kern = make_gemm_kernel(plain);
    CHECK_FALSE(kern->traits().epilogue.active());
    const int before = b.runs;
    ops.activation = Activation::GeluTanh;
    CHECK_THROWS_WITH_AS(kern->run(ops), doctest::Contains("the activation gelu_tanh, which the kernel does not declare"), NotSupportedError);
    ops.activation = Activation::None;
    ops.bias_kind = BiasKind::PerColumn;
    ops.bias = bias.data();
    CHECK_THROWS_WITH_AS(kern->run(ops), doctest::Contains("a bias per column"), NotSupportedError);
    ops.bias_kind = BiasKind::None;
    ops.scale_d = 2;
    CHECK_THROWS_WITH_AS(kern->run(ops), doctest::Contains("FP8 scale factors"), NotSupportedError);
    ops.scale_d = 1;
    ops.amax = amax.data();
    CHECK_THROWS_WITH_AS(kern->run(ops), doctest::Contains("amax"), NotSupportedError);
    CHECK(b.runs == before);
  }
}
