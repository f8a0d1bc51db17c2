// base/npy.hpp — NumPy .npy files (format 1.0/2.0): read and write 1-D/2-D arrays of float64,
// float32, float16, uint16, uint8 (bit patterns of narrow formats) and uint32; read bfloat16 as ml_dtypes leaves it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fpcert {

/// F16: '<f2' (IEEE binary16). V2: '|V2', two opaque bytes: what numpy.save writes for an ml_dtypes bfloat16 array (NumPy's
/// type codes cannot name a user dtype; np.load gives it back as void). BF16: 'bfloat16', the descr a header written with
/// str(dtype) of an ml_dtypes array holds. value() decodes F16 and BF16; V2's bits are whatever the writer meant.
enum class NpyType : std::uint8_t { F64, F32, U8, U16, U32, U64, I64, F16, V2, BF16 };

struct NpyArray {
  NpyType type = NpyType::F64;
  std::vector<std::int64_t> shape;   ///< 1 or 2 dimensions
  bool fortran_order = false;        ///< column-major data
  std::vector<std::uint8_t> bytes;   ///< raw little-endian data
  std::int64_t size() const;
  std::int64_t rows() const { return shape.empty() ? 0 : shape[0]; }
  std::int64_t cols() const { return shape.size() < 2 ? 1 : shape[1]; }
  /// Element i (in storage order) widened to double (integers as their value; f16 and bf16 decoded, exactly; V2 as its
  /// 16 bits' integer value).
  double value(std::int64_t i) const;
  /// Element i as an unsigned integer bit pattern (integer types, and the 2-byte F16, V2, BF16).
  std::uint64_t bits(std::int64_t i) const;
};

std::string to_string(NpyType t);

/// Read a .npy file. The header is read and checked first (magic, version, a header of at most 64
/// KiB, exactly the keys descr, fortran_order and shape, the last value of a repeated key as NumPy
/// takes it, non-negative integer dimensions whose byte count does not overflow), then the data,
/// which must be exactly what the shape needs: a file is never read beyond that, whatever it is.
/// Throws InputError naming the file and what is wrong with it.
NpyArray read_npy(const std::string& path);

/// The same from bytes in memory (`name` only names them in messages).
NpyArray parse_npy(std::string_view bytes, const std::string& name);

/// The largest .npy header read (NumPy's own default limit is 10000 bytes).
inline constexpr std::size_t kNpyMaxHeader = 65536;

/// Write a 2-D (or 1-D when cols < 0) C-order array atomically.
void write_npy(const std::string& path, NpyType type, std::int64_t rows, std::int64_t cols, const void* data);
void write_npy_f64(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<double>& v);
void write_npy_f32(const std::string& path, std::int64_t rows, std::int64_t cols, const std::vector<double>& v);

}  // namespace fpcert
