#include "tools/kir-gen/matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kir::gen {
namespace {

constexpr int64_t kElementBytes16 = 2;
// One 128-byte swizzle span of 16-bit elements: the k-slice width, and the
// width of an M/N-major operand chunk and of a 16-bit output sub-tile.
constexpr int kSpan16 = 64;
// The same span of f32 elements: the width of an f32 output sub-tile.
constexpr int kSpan32 = 32;
// Bytes kept aside for the mbarrier rings and the 1024-byte alignment of
// the allocation after them (a ring of 16 stages takes 256 bytes).
constexpr int64_t kSharedSlack = 1024;
// The largest TMA tensor dimension (cuTensorMapEncodeTiled: 2^32).
constexpr int64_t kMaxDimension = int64_t{1} << 32;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t BytesOf(ElementType type) {
  return type == ElementType::kF32 ? 4 : kElementBytes16;
}

// The byte count a `tma.load` of one k-step completes with.
int64_t StageBytes(const MatmulConfig& config) {
  return int64_t{config.tile_m + config.tile_n} * config.tile_k *
         kElementBytes16;
}

// Output columns per TMA store: one 128-byte swizzle span.
int OutputSpan(const MatmulProblem& problem) {
  return problem.out_dtype == ElementType::kF32 ? kSpan32 : kSpan16;
}

int Subtiles(const MatmulProblem& problem, const MatmulConfig& config) {
  return config.tile_n / OutputSpan(problem);
}

EpilogueMode ResolvedEpilogue(const MatmulProblem& problem,
                              const MatmulConfig& config);

// Shared buffers of one output sub-tile: the whole tile over the stages
// (reuse), or a ring of two beside them (dedicated).
int EpilogueBuffers(const MatmulProblem& problem, const MatmulConfig& config) {
  const int subtiles = Subtiles(problem, config);
  return ResolvedEpilogue(problem, config) == EpilogueMode::kDedicated
             ? std::min(2, subtiles)
             : subtiles;
}

// The output buffers of one consumer group's ring; ping-pong's two groups
// each have their own (circular-buffer gives the second a copy), so that
// one's epilogue never waits for the other's.
int64_t EpilogueBytes(const MatmulProblem& problem,
                      const MatmulConfig& config) {
  return int64_t{EpilogueBuffers(problem, config)} * config.tile_m *
         OutputSpan(problem) * BytesOf(problem.out_dtype) *
         (config.pingpong ? 2 : 1);
}

bool Persistent(const MatmulConfig& config) {
  return config.split_k == 1 && config.epilogue != EpilogueMode::kReuseMainloop;
}

// The epilogue mode a configuration is generated with (kAuto resolved as
// ChooseConfig would: reuse where the grid is not persistent anyway).
EpilogueMode ResolvedEpilogue(const MatmulProblem& problem,
                              const MatmulConfig& config) {
  if (config.epilogue != EpilogueMode::kAuto) return config.epilogue;
  // Ping-pong is persistent: the producer loads one group's next tile into
  // the stages while the other group runs its epilogue.
  if (config.pingpong) return EpilogueMode::kDedicated;
  if (config.split_k > 1) return EpilogueMode::kReuseMainloop;
  const int64_t tiles =
      CeilDiv(problem.m, config.tile_m) * CeilDiv(problem.n, config.tile_n);
  return tiles <= kSmCount ? EpilogueMode::kReuseMainloop
                           : EpilogueMode::kDedicated;
}

const char* SplitKModeName(SplitKMode mode) {
  switch (mode) {
    case SplitKMode::kSerial:
      return "serial";
    case SplitKMode::kTmaSerial:
      return "tma-serial";
    case SplitKMode::kTmaAtomic:
      return "tma-atomic";
    case SplitKMode::kCluster:
      return "cluster";
    case SplitKMode::kGather:
      return "gather";
  }
  return "serial";
}

const char* EpilogueName(EpilogueMode mode) {
  switch (mode) {
    case EpilogueMode::kAuto:
      return "auto";
    case EpilogueMode::kReuseMainloop:
      return "reuse";
    case EpilogueMode::kDedicated:
      return "dedicated";
  }
  return "auto";
}

// The row stride check TMA imposes on one tensor: `rows_of` elements of
// `type` per row must make a multiple of 16 bytes.
absl::Status CheckRowStride(absl::string_view tensor, absl::string_view layout,
                            char size_name, int64_t row_elements,
                            ElementType type) {
  const int64_t row_bytes = row_elements * BytesOf(type);
  if (row_bytes % 16 == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is %s: its rows hold %c = %d %s elements, %d bytes, and a TMA "
      "tensor map needs a row stride that is a multiple of 16 bytes (%c a "
      "multiple of %d); this shape cannot be generated",
      tensor, layout, size_name, row_elements, ElementTypeName(type), row_bytes,
      size_name, 16 / BytesOf(type)));
}

// What ping-pong asks of a configuration beyond what every one needs.
absl::Status ValidatePingPong(const MatmulConfig& config) {
  if (config.circular_buffer != "warp_specialized") {
    return absl::InvalidArgumentError(
        "ping-pong with circular buffer mode pipelined: ping-pong's two "
        "consumer warpgroups and producer are warp_specialized roles");
  }
  if (config.consumer_warpgroups != 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ping-pong with %d consumer warpgroups: ping-pong has two (wg2), "
        "each computing whole tiles in turn",
        config.consumer_warpgroups));
  }
  if (config.tile_m != 64 && config.tile_m != 128) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ping-pong tile M = %d: one warpgroup computes the whole tile, one "
        "or two 64-row wgmma blocks (64 or 128)",
        config.tile_m));
  }
  if (config.tile_m * config.tile_n > 128 * 128) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ping-pong tile %dx%d: one warpgroup holds the whole tile's f32 "
        "accumulator, %d registers per thread; at most 128 leave room "
        "within the 232 a consumer thread gets (128x128, 64x256 or "
        "smaller)",
        config.tile_m, config.tile_n, config.tile_m * config.tile_n / 128));
  }
  if (config.split_k > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "split-K %d with ping-pong: split-K's grid computes one tile per "
        "block (`splitk` may not sit in a loop), and ping-pong needs a "
        "persistent tile loop whose tiles its two warpgroups take in turn; "
        "use the cooperative schedule to split K",
        config.split_k));
  }
  if (config.epilogue == EpilogueMode::kReuseMainloop) {
    return absl::InvalidArgumentError(
        "epilogue reuse with ping-pong: the producer loads one warpgroup's "
        "next tile into the stages while the other writes its output tile, "
        "so the output cannot take the stages' bytes; use dedicated");
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Kernel text.

// Writes the kernel body; `Const` collects the index constants it uses,
// which are emitted first.
class KernelWriter {
 public:
  std::string Const(int64_t value) {
    constants_.insert(value);
    return absl::StrCat("%c", value);
  }
  void Line(absl::string_view text) {
    absl::StrAppend(&body_, std::string(2 * indent_, ' '), text, "\n");
  }
  void Blank() { body_ += "\n"; }
  void Open(absl::string_view text) {
    Line(absl::StrCat(text, " {"));
    ++indent_;
  }
  void Close() {
    --indent_;
    Line("}");
  }
  // `} else {`, `} epilogue {`.
  void Reopen(absl::string_view keyword) {
    --indent_;
    Line(absl::StrCat("} ", keyword, " {"));
    ++indent_;
  }
  // `%name = op a, b : index`.
  std::string Index(absl::string_view name, absl::string_view op,
                    absl::string_view a, absl::string_view b) {
    Line(absl::StrCat("%", name, " = ", op, " ", a, ", ", b, " : index"));
    return absl::StrCat("%", name);
  }
  std::string Constants() const {
    std::string text;
    for (int64_t value : constants_) {
      absl::StrAppend(&text, "  %c", value, " = const ", value, " : index\n");
    }
    return text;
  }
  const std::string& body() const { return body_; }

 private:
  std::set<int64_t> constants_;
  std::string body_;
  int indent_ = 1;
};

class MatmulWriter {
 public:
  MatmulWriter(const MatmulProblem& problem, const MatmulConfig& config)
      : p_(problem),
        c_(config),
        a_mn_(problem.a_major == OperandMajor::kMN),
        b_mn_(problem.b_major == OperandMajor::kMN),
        out16_(problem.out_dtype != ElementType::kF32),
        persistent_(Persistent(config)),
        split_(config.split_k > 1),
        pingpong_(config.pingpong),
        row_blocks_(config.pingpong ? config.tile_m / 64 : 1),
        share_b_(config.cluster_m == 2),
        share_a_(config.cluster_n == 2),
        zero_first_(split_ || b_mn_ || pingpong_) {}

  // The body; then the header and the constants it uses.
  std::string Write();
  std::string Header();
  std::string Constants() const { return w_.Constants(); }

 private:
  std::string T() const { return ElementTypeName(p_.dtype); }
  std::string Out() const { return ElementTypeName(p_.out_dtype); }
  std::string C(int64_t value) { return w_.Const(value); }
  void Rasterize(const std::string& tile);
  // The block's tile in a grid of one tile per block: from its index, or
  // (clustered) from its cluster's pair of tiles and its rank in it.
  void BlockTile();
  // %kt_begin, %kt_end of split %split of %splits with c_.split_k_skew.
  void SkewedSplitRange();
  void LoadOperand(const std::string& name, bool mn_major, int extent,
                   const std::string& origin, bool cluster_shared);
  void ZeroAccumulator();
  void KLoop(const std::string& lo, const std::string& hi,
             const std::string& iteration_base);
  void Wgmmas(int kk, bool zero_init);
  void StoreSubtile(const std::string& sub, const std::string& buffer,
                    const std::string& acc_base = "");
  void Epilogue();

  const MatmulProblem& p_;
  const MatmulConfig& c_;
  const bool a_mn_, b_mn_, out16_, persistent_, split_, pingpong_;
  // Ping-pong: the 64-row blocks of the tile that its one warpgroup
  // computes, each into its own part of the accumulator (else 1: each
  // cooperative warpgroup computes one).
  const int row_blocks_;
  // A 2x1 cluster's CTAs compute vertically adjacent tiles and share B's
  // k-slices; a 1x2 cluster's horizontally adjacent tiles share A's. The
  // tile loop then walks pairs of tiles, the CTA's rank picking its tile of
  // the pair, so both CTAs of a cluster run the same iterations.
  const bool share_b_, share_a_;
  bool Clustered() const { return share_a_ || share_b_; }
  // Whether the accumulator is zeroed by stores before the k loop rather
  // than by the first k-step's wgmmas (`zero_init` under `kt == 0`): a
  // split may have no k-steps; with several wgmmas per k16 step (N-major
  // B, or ping-pong's row blocks) the branch makes ptxas serialize them
  // (warning C7519).
  const bool zero_first_;
  KernelWriter w_;
};

std::string MatmulWriter::Header() {
  const int tm = c_.tile_m, tn = c_.tile_n, tk = c_.tile_k;
  const std::string a_shape = a_mn_ ? "%K, %M" : "%M, %K";
  const std::string b_shape = b_mn_ ? "%K, %N" : "%N, %K";
  const std::string a_box =
      a_mn_ ? absl::StrCat(tk, ", ", kSpan16) : absl::StrCat(tm, ", ", tk);
  const std::string b_box =
      b_mn_ ? absl::StrCat(tk, ", ", kSpan16) : absl::StrCat(tn, ", ", tk);
  const int out_span = out16_ ? kSpan16 : kSpan32;
  std::string tiles = absl::StrFormat("cdiv(%%M, %d) * cdiv(%%N, %d)", tm, tn);
  if (share_b_) {
    tiles = absl::StrFormat("cdiv(cdiv(%%M, %d), 2) * cdiv(%%N, %d)", tm, tn);
  } else if (share_a_) {
    tiles = absl::StrFormat("cdiv(%%M, %d) * cdiv(cdiv(%%N, %d), 2)", tm, tn);
  }
  std::string grid;
  if (split_) {
    grid = absl::StrFormat("grid(%s%s, 1, %d)", Clustered() ? "2 * " : "",
                           tiles, c_.split_k);
  } else if (Clustered() && persistent_) {
    // Pairs of tiles over clusters of two CTAs: at most one CTA per SM.
    grid = absl::StrFormat("grid(2 * min(%s, %d))", tiles, kSmCount / 2);
  } else if (Clustered()) {
    grid = absl::StrFormat("grid(2 * %s)", tiles);
  } else if (persistent_) {
    grid = absl::StrFormat("grid(min(%s, %d))", tiles, kSmCount);
  } else {
    grid = absl::StrFormat("grid(%s)", tiles);
  }
  return absl::StrFormat(
      "kernel @%s sizes(%%M, %%N, %%K)\n"
      "    (%%a: global %s[%s], %%b: global %s[%s], %%c: global %s[%%M, "
      "%%N],\n"
      "     %%a_map: tensormap %s[%s] of %%a {swizzle = 128},\n"
      "     %%b_map: tensormap %s[%s] of %%b {swizzle = 128},\n"
      "     %%c_map: tensormap %s[%d, %d] of %%c {swizzle = 128})\n"
      "    %s block(%d)%s {\n",
      kKernelName, T(), a_shape, T(), b_shape, Out(), T(), a_box, T(), b_box,
      Out(), tm, out_span, grid,
      // Ping-pong is written for one warpgroup; the pass adds the second.
      pingpong_ ? 128 : 128 * c_.consumer_warpgroups,
      Clustered() ? " cluster(2)" : "");
}

// Split z runs k-steps [z b + d z (z-1) / 2, (z+1) b + d (z+1) z / 2) of
// the tile's k_tiles, where d is the skew and b = (k_tiles - d S (S-1) / 2)
// / S for S splits; the last split also takes the k-steps the division
// leaves. Where K is too short for the skew (every split keeps at least
// one k-step), d shrinks to what fits, so any K the kernel is run with
// covers its k-steps exactly once.
void MatmulWriter::SkewedSplitRange() {
  w_.Line(absl::StrFormat(
      "// Skewed splits: split z runs %d k-step(s) more than split z-1, so "
      "the splits",
      c_.split_k_skew));
  w_.Line(
      "// finish in the order of their turns and each turn hides behind the "
      "next");
  w_.Line("// split's longer mainloop.");
  w_.Index("sk_splits_m1", "sub", "%splits", C(1));
  w_.Index("sk_pairs", "mul", "%splits", "%sk_splits_m1");
  w_.Index("sk_tri", "div", "%sk_pairs", C(2));
  w_.Index("sk_tri1", "max", "%sk_tri", C(1));
  w_.Index("sk_room", "sub", "%k_tiles", "%splits");
  w_.Index("sk_room0", "max", "%sk_room", C(0));
  w_.Index("sk_fit", "div", "%sk_room0", "%sk_tri1");
  w_.Index("sk_skew", "min", "%sk_fit", C(c_.split_k_skew));
  w_.Index("sk_extra", "mul", "%sk_skew", "%sk_tri");
  w_.Index("sk_even", "sub", "%k_tiles", "%sk_extra");
  w_.Index("sk_base", "div", "%sk_even", "%splits");
  // ramp(z) = z (z-1) / 2, the extra k-steps of the splits before z.
  w_.Index("sk_z_sq", "mul", "%split", "%split");
  w_.Index("sk_z_pairs", "sub", "%sk_z_sq", "%split");
  w_.Index("sk_ramp", "div", "%sk_z_pairs", C(2));
  w_.Index("sk_even_begin", "mul", "%split", "%sk_base");
  w_.Index("sk_skew_begin", "mul", "%sk_skew", "%sk_ramp");
  w_.Index("kt_begin", "add", "%sk_even_begin", "%sk_skew_begin");
  w_.Index("sk_next", "add", "%split", C(1));
  w_.Index("sk_next_ramp", "add", "%sk_ramp", "%split");
  w_.Index("sk_even_next", "mul", "%sk_next", "%sk_base");
  w_.Index("sk_skew_next", "mul", "%sk_skew", "%sk_next_ramp");
  w_.Index("sk_next_begin", "add", "%sk_even_next", "%sk_skew_next");
  w_.Index("sk_covered", "mul", "%splits", "%sk_base");
  w_.Index("sk_covered_all", "add", "%sk_covered", "%sk_extra");
  w_.Index("sk_left", "sub", "%k_tiles", "%sk_covered_all");
  w_.Index("sk_is_last", "div", "%sk_next", "%splits");
  w_.Index("sk_last_extra", "mul", "%sk_is_last", "%sk_left");
  w_.Index("kt_end", "add", "%sk_next_begin", "%sk_last_extra");
}

// Grouped rasterization: tiles go down groups of `raster_group` tile rows
// column by column, so the blocks that run together share A and B slices
// in L2. With a cluster, `unit` numbers pairs of tiles (two tile rows of a
// column, or two tile columns of a row) and the CTA's rank picks its tile.
void MatmulWriter::BlockTile() {
  if (Clustered()) {
    w_.Line("%cta = block.id x : index");
    w_.Index("cluster", "div", "%cta", C(2));
    w_.Line("%rank = cluster.cta_rank : index");
    Rasterize("%cluster");
  } else {
    w_.Line("%tile = block.id x : index");
    Rasterize("%tile");
  }
}

void MatmulWriter::Rasterize(const std::string& unit) {
  const std::string g = C(c_.raster_group);
  const std::string rows = share_b_ ? "%pairs_m" : "%tiles_m";
  w_.Index("group", "div", unit, "%group_tiles");
  w_.Index("first_m", "mul", "%group", g);
  w_.Index("rows_left", "sub", rows, "%first_m");
  w_.Index("group_rows", "min", "%rows_left", g);
  w_.Index("in_group", "rem", unit, "%group_tiles");
  w_.Index("tm_in_group", "rem", "%in_group", "%group_rows");
  if (share_b_) {
    w_.Index("pair_m", "add", "%first_m", "%tm_in_group");
    w_.Index("pair_row", "mul", "%pair_m", C(2));
    w_.Index("tile_m", "add", "%pair_row", "%rank");
    w_.Index("tile_n", "div", "%in_group", "%group_rows");
  } else if (share_a_) {
    w_.Index("tile_m", "add", "%first_m", "%tm_in_group");
    w_.Index("pair_n", "div", "%in_group", "%group_rows");
    w_.Index("pair_col", "mul", "%pair_n", C(2));
    w_.Index("tile_n", "add", "%pair_col", "%rank");
  } else {
    w_.Index("tile_m", "add", "%first_m", "%tm_in_group");
    w_.Index("tile_n", "div", "%in_group", "%group_rows");
  }
  w_.Index("m0", "mul", "%tile_m", C(c_.tile_m));
  w_.Index("n0", "mul", "%tile_n", C(c_.tile_n));
}

// The wgmmas of one 16-wide k-step `kk` of the slice: one per operand
// chunk of an N-major B (a 128-byte swizzle atom holds 64 of its columns),
// else one of width tile_n.
void MatmulWriter::Wgmmas(int kk, bool zero_init) {
  std::vector<std::string> attrs;
  if (a_mn_) attrs.push_back("a_major = m");
  if (b_mn_) attrs.push_back("b_major = n");
  if (zero_init) attrs.push_back("zero_init");
  const int chunks = b_mn_ ? c_.tile_n / kSpan16 : 1;
  const int n = c_.tile_n / chunks;
  // Ping-pong: row block r of the tile (its A rows 64r ..) accumulates at
  // acc[r * tile_n / 2]; cooperative: the warpgroup's own 64 rows.
  for (int r = 0; r < row_blocks_; ++r) {
    std::string a_operand;
    if (pingpong_) {
      a_operand = a_mn_
                      ? absl::StrCat("%sa[", C(r), ", ", C(kk), ", ", C(0), "]")
                      : absl::StrCat("%sa[", C(64 * r), ", ", C(kk), "]");
    } else {
      a_operand = a_mn_ ? absl::StrCat("%sa[%wg, ", C(kk), ", ", C(0), "]")
                        : absl::StrCat("%sa[%wg_row, ", C(kk), "]");
    }
    for (int j = 0; j < chunks; ++j) {
      const std::string b_operand =
          b_mn_ ? absl::StrCat("%sb[", C(j), ", ", C(kk), ", ", C(0), "]")
                : absl::StrCat("%sb[", C(0), ", ", C(kk), "]");
      std::vector<std::string> all = {absl::StrCat("n = ", n)};
      all.insert(all.end(), attrs.begin(), attrs.end());
      w_.Line(absl::StrCat("wgmma %acc[", C(r * c_.tile_n / 2 + j * n / 2),
                           "], ", a_operand, ", ", b_operand, " {",
                           absl::StrJoin(all, ", "), "}"));
    }
  }
}

// The TMA loads of one operand's k-slice: one box, or one per 64-wide chunk
// of an M/N-major operand (tensor coordinates outermost first: [k, mn]).
void MatmulWriter::LoadOperand(const std::string& name, bool mn_major,
                               int extent, const std::string& origin,
                               bool cluster_shared) {
  const std::string map = absl::StrCat("%", name, "_map");
  const std::string buffer = absl::StrCat("%s", name);
  // The same box in both CTAs of the cluster: circular-buffer issues it once
  // per cluster, each CTA loading its half into both.
  const std::string shared = cluster_shared ? " {cluster_shared}" : "";
  if (!mn_major) {
    w_.Line(absl::StrFormat("tma.load %s[%s, %s], %s[%s, %%k0], %%bar[%s]%s",
                            buffer, C(0), C(0), map, origin, C(0), shared));
    return;
  }
  for (int j = 0; j < extent / kSpan16; ++j) {
    const std::string at =
        j == 0 ? origin
               : w_.Index(absl::StrCat(origin.substr(1, 1), "_", j), "add",
                          origin, C(j * kSpan16));
    w_.Line(
        absl::StrFormat("tma.load %s[%s, %s, %s], %s[%%k0, %s], %%bar[%s]%s",
                        buffer, C(j), C(0), C(0), map, at, C(0), shared));
  }
}

void MatmulWriter::ZeroAccumulator() {
  const int size = row_blocks_ * c_.tile_n / 2;
  w_.Open(absl::StrFormat("for %%z = %s to %s step %s {unroll = %d}", C(0),
                          C(size), C(1), size));
  w_.Line("store %acc[%z], %zero");
  w_.Close();
}

void MatmulWriter::KLoop(const std::string& lo, const std::string& hi,
                         const std::string& iteration_base) {
  w_.Open(absl::StrFormat(
      "for %%kt = %s to %s step %s {circular_buffer = %s, stages = %d%s}", lo,
      hi, C(1), c_.circular_buffer, c_.stages, pingpong_ ? ", pingpong" : ""));
  // The author's protocol: one mbarrier, whose phase count is the number of
  // k-steps this block ran before this one.
  std::string it = "%kt";
  if (!iteration_base.empty()) {
    it = w_.Index("it", "add", iteration_base, "%kt");
  } else if (lo != C(0)) {
    it = w_.Index("it", "sub", "%kt", lo);
  }
  w_.Index("phase", "rem", it, C(2));
  w_.Index("k0", "mul", "%kt", C(c_.tile_k));
  w_.Open("if %is_t0");
  w_.Line(absl::StrFormat("mbarrier.arrive_tx %%bar[%s] {bytes = %d}", C(0),
                          StageBytes(c_)));
  LoadOperand("a", a_mn_, c_.tile_m, "%m0", share_a_);
  LoadOperand("b", b_mn_, c_.tile_n, "%n0", share_b_);
  w_.Close();
  w_.Line(absl::StrFormat("mbarrier.wait %%bar[%s], %%phase", C(0)));
  if (zero_first_) {
    for (int kk = 0; kk < c_.tile_k; kk += 16) Wgmmas(kk, false);
  } else {
    w_.Line("// From zero on the tile's first k-slice.");
    w_.Line(absl::StrFormat("%%first = cmp eq %%kt, %s : i1", C(0)));
    w_.Open("if %first");
    Wgmmas(0, true);
    w_.Reopen("else");
    Wgmmas(0, false);
    w_.Close();
    for (int kk = 16; kk < c_.tile_k; kk += 16) Wgmmas(kk, false);
  }
  w_.Close();
}

// Writes 64 (16-bit) or 32 (f32) output columns, sub-tile `sub` of the
// accumulator, into `%sc[buffer]`.
void MatmulWriter::StoreSubtile(const std::string& sub,
                                const std::string& buffer,
                                const std::string& acc_base) {
  if (out16_) {
    w_.Line(absl::StrFormat(
        "// acc -> %s: columns 16i .. 16i+15 of the warp's 16 rows "
        "(acc[8i .. 8i+7], stmatrix's order), i = 4 * sub-tile + q.",
        Out()));
    w_.Open(absl::StrFormat("for %%q = %s to %s step %s {unroll = 4}", C(0),
                            C(4), C(1)));
    w_.Index("s4", "mul", sub, C(4));
    w_.Index("i", "add", "%s4", "%q");
    if (acc_base.empty()) {
      w_.Index("j0", "mul", "%i", C(8));
    } else {
      w_.Index("i8", "mul", "%i", C(8));
      w_.Index("j0", "add", "%i8", acc_base);
    }
    std::vector<std::string> halves;
    for (int e = 0; e < 8; ++e) {
      std::string j = "%j0";
      if (e > 0) j = w_.Index(absl::StrCat("j", e), "add", "%j0", C(e));
      w_.Line(absl::StrFormat("%%x%d = load %%acc[%s] : f32", e, j));
      w_.Line(absl::StrFormat("%%h%d = cast %%x%d : %s", e, e, Out()));
      halves.push_back(absl::StrCat("%h", e));
    }
    w_.Line(absl::StrFormat("%%frag = vec.from %s : vec<8x%s>",
                            absl::StrJoin(halves, ", "), Out()));
    w_.Index("col", "mul", "%q", C(16));
    w_.Line(
        absl::StrFormat("stmatrix %%sc[%s, %%row0, %%col], %%frag", buffer));
    w_.Close();
    return;
  }
  w_.Line(
      "// acc[4i + 2h + e] is the thread's row 8h, column 8i + 2*(lane % 4) "
      "+ e; i = 4 * sub-tile + q.");
  w_.Open(absl::StrFormat("for %%q = %s to %s step %s {unroll = 4}", C(0), C(4),
                          C(1)));
  w_.Index("s4", "mul", sub, C(4));
  w_.Index("i", "add", "%s4", "%q");
  w_.Index("q_col", "mul", "%q", C(8));
  w_.Index("col", "add", "%q_col", "%lane_col");
  if (acc_base.empty()) {
    w_.Index("j0", "mul", "%i", C(4));
  } else {
    w_.Index("i4", "mul", "%i", C(4));
    w_.Index("j0", "add", "%i4", acc_base);
  }
  w_.Index("j1", "add", "%j0", C(1));
  w_.Index("j2", "add", "%j0", C(2));
  w_.Index("j3", "add", "%j0", C(3));
  for (int h = 0; h < 2; ++h) {
    w_.Line(absl::StrFormat("%%x%d = load %%acc[%%j%d] : f32", 2 * h, 2 * h));
    w_.Line(absl::StrFormat("%%x%d = load %%acc[%%j%d] : f32", 2 * h + 1,
                            2 * h + 1));
    w_.Line(absl::StrFormat("%%v%d = vec.from %%x%d, %%x%d : vec<2xf32>", h,
                            2 * h, 2 * h + 1));
    w_.Line(absl::StrFormat("store %%sc[%s, %%row_%c, %%col], %%v%d", buffer,
                            h == 0 ? 'a' : 'b', h));
  }
  w_.Close();
}

void MatmulWriter::Epilogue() {
  const int subtiles = Subtiles(p_, c_);
  const std::string tma_store = absl::StrFormat(
      "tma.store %%c_map[%%m0, %%n_s], %%sc[%%buf, %s, %s]", C(0), C(0));
  if (c_.epilogue == EpilogueMode::kDedicated) {
    // Sub-tiles through a ring of two buffers: the store of one overlaps
    // the writes of the next (the passes wait for the store before last
    // to have read its buffer).
    w_.Line("// The output tile, sub-tile by sub-tile through two buffers.");
    w_.Open(absl::StrFormat("for %%s = %s to %s step %s {unroll = %d}", C(0),
                            C(subtiles), C(1), subtiles));
    w_.Index("buf", "rem", "%s", C(EpilogueBuffers(p_, c_)));
    if (pingpong_) {
      // The warpgroup writes every 64-row block of the sub-tile.
      w_.Open(absl::StrFormat("for %%r = %s to %s step %s {unroll = %d}", C(0),
                              C(row_blocks_), C(1), row_blocks_));
      w_.Index("r_row", "mul", "%r", C(64));
      w_.Index("row0", "add", "%r_row", "%warp_row");
      if (!out16_) {
        w_.Index("row_a", "add", "%row0", "%lane_row");
        w_.Index("row_b", "add", "%row_a", C(8));
      }
      w_.Index("acc_base", "mul", "%r", C(c_.tile_n / 2));
      StoreSubtile("%s", "%buf", "%acc_base");
      w_.Close();
    } else {
      StoreSubtile("%s", "%buf");
    }
    w_.Open("if %is_t0");
    w_.Index("s_col", "mul", "%s", C(OutputSpan(p_)));
    w_.Index("n_s", "add", "%n0", "%s_col");
    w_.Line(tma_store);
    w_.Close();
    w_.Close();
    return;
  }
  // The whole output tile in shared memory (over the stages), then its
  // stores.
  w_.Line("// The output tile in shared memory, one sub-tile per buffer.");
  w_.Open(absl::StrFormat("for %%s = %s to %s step %s {unroll = %d}", C(0),
                          C(subtiles), C(1), subtiles));
  StoreSubtile("%s", "%s");
  w_.Close();
  w_.Line("// One TMA store per sub-tile (clipped at the edges).");
  w_.Open("if %is_t0");
  w_.Open(
      absl::StrFormat("for %%buf = %s to %s step %s", C(0), C(subtiles), C(1)));
  w_.Index("s_col", "mul", "%buf", C(OutputSpan(p_)));
  w_.Index("n_s", "add", "%n0", "%s_col");
  w_.Line(tma_store);
  w_.Close();
  w_.Close();
}

std::string MatmulWriter::Write() {
  const int tm = c_.tile_m, tn = c_.tile_n, tk = c_.tile_k;
  w_.Line(absl::StrFormat(
      "// One k-slice of A (%dx%d) and of B (%dx%d), 128-byte swizzled%s.", tm,
      tk, tn, tk,
      a_mn_ || b_mn_ ? "; an M/N-major operand in chunks of 64 rows/columns "
                       "(one swizzle atom wide)"
                     : ""));
  w_.Line(absl::StrFormat(
      "%%sa = alloc.shared {align = 1024, swizzle = 128} : shared %s[%s]", T(),
      a_mn_ ? absl::StrCat(tm / kSpan16, ", ", tk, ", ", kSpan16)
            : absl::StrCat(tm, ", ", tk)));
  w_.Line(absl::StrFormat(
      "%%sb = alloc.shared {align = 1024, swizzle = 128} : shared %s[%s]", T(),
      b_mn_ ? absl::StrCat(tn / kSpan16, ", ", tk, ", ", kSpan16)
            : absl::StrCat(tn, ", ", tk)));
  w_.Line("%bar = alloc.shared {align = 8} : shared mbarrier[1]");
  const int span = OutputSpan(p_);
  const int buffers = EpilogueBuffers(p_, c_);
  w_.Line(absl::StrFormat(
      "// Output sub-tiles of %dx%d, 128-byte swizzled: %s.", tm, span,
      pingpong_ ? absl::StrFormat("a ring of %d beside the stages (the "
                                  "warpgroup's own: circular-buffer gives "
                                  "the second consumer warpgroup a copy)",
                                  buffers)
      : c_.epilogue == EpilogueMode::kDedicated
          ? absl::StrFormat("a ring of %d beside the stages", buffers)
          : "the whole tile, which may take the stages' bytes"));
  w_.Line(absl::StrFormat(
      "%%sc = alloc.shared {align = 1024, swizzle = 128} : shared %s[%d, %d, "
      "%d]",
      Out(), buffers, tm, span));
  if (pingpong_) {
    w_.Line(absl::StrFormat(
        "// This thread's fragments of the tile's %d 64x%d row block(s), "
        "block r from acc[%d r].",
        row_blocks_, tn, tn / 2));
  } else {
    w_.Line(absl::StrFormat(
        "// This thread's fragment of its warpgroup's 64x%d accumulator "
        "tile.",
        tn));
  }
  w_.Line(
      absl::StrFormat("%%acc = alloc.reg : reg f32[%d]", row_blocks_ * tn / 2));
  w_.Blank();
  w_.Line("%tid = thread.id x : index");
  w_.Line(absl::StrFormat("%%is_t0 = cmp eq %%tid, %s : i1", C(0)));
  w_.Open("if %is_t0");
  w_.Line(absl::StrFormat("mbarrier.init %%bar[%s] {count = 1}", C(0)));
  w_.Close();
  if (zero_first_) w_.Line("%zero = const 0.0 : f32");
  w_.Blank();
  w_.Index("m_round", "add", "%M", C(tm - 1));
  w_.Index("tiles_m", "div", "%m_round", C(tm));
  w_.Index("n_round", "add", "%N", C(tn - 1));
  w_.Index("tiles_n", "div", "%n_round", C(tn));
  w_.Index("k_round", "add", "%K", C(tk - 1));
  w_.Index("k_tiles", "div", "%k_round", C(tk));
  if (share_b_) {
    w_.Index("tiles_m1", "add", "%tiles_m", C(1));
    w_.Index("pairs_m", "div", "%tiles_m1", C(2));
    w_.Index("group_tiles", "mul", "%tiles_n", C(c_.raster_group));
  } else if (share_a_) {
    w_.Index("tiles_n1", "add", "%tiles_n", C(1));
    w_.Index("pairs_n", "div", "%tiles_n1", C(2));
    w_.Index("group_tiles", "mul", "%pairs_n", C(c_.raster_group));
  } else {
    w_.Index("group_tiles", "mul", "%tiles_n", C(c_.raster_group));
  }
  w_.Blank();
  if (pingpong_) {
    w_.Line(
        "// This thread's warp: its 16 rows of each 64-row block of the "
        "tile.");
    w_.Index("wg_warp", "div", "%tid", C(32));
    w_.Index("warp_row", "mul", "%wg_warp", C(16));
  } else {
    w_.Line("// This thread's warpgroup (a 64-row half of the tile) and warp.");
    w_.Index("wg", "div", "%tid", C(128));
    w_.Index("wg_row", "mul", "%wg", C(64));
    w_.Index("t_in_wg", "rem", "%tid", C(128));
    w_.Index("wg_warp", "div", "%t_in_wg", C(32));
    w_.Index("warp_row", "mul", "%wg_warp", C(16));
    w_.Index("row0", "add", "%wg_row", "%warp_row");
  }
  if (!out16_) {
    w_.Index("lane", "rem", "%tid", C(32));
    w_.Index("lane_row", "div", "%lane", C(4));
    w_.Index("lane_quad", "rem", "%lane", C(4));
    w_.Index("lane_col", "mul", "%lane_quad", C(2));
    if (!pingpong_) {  // ping-pong's rows are per row block
      w_.Index("row_a", "add", "%row0", "%lane_row");
      w_.Index("row_b", "add", "%row_a", C(8));
    }
  }
  w_.Blank();
  if (persistent_) {
    // Each block (cluster) walks its tiles (pairs of tiles), whose loop
    // bounds are then the same in both CTAs of a cluster.
    const std::string unit = Clustered() ? "pair" : "tile";
    const std::string first = Clustered() ? "%cluster" : "%cta";
    const std::string step = Clustered() ? "%num_clusters" : "%num_ctas";
    w_.Line(Clustered() ? "// Persistent clusters: cluster c computes pairs "
                          "of tiles c, c + clusters, ..."
                        : "// Persistent: block b computes tiles b, b + "
                          "grid, ...");
    w_.Line("%cta = block.id x : index");
    w_.Line("%num_ctas = grid.dim x : index");
    std::string count;
    if (Clustered()) {
      w_.Index("cluster", "div", "%cta", C(2));
      w_.Index("num_clusters", "div", "%num_ctas", C(2));
      w_.Line("%rank = cluster.cta_rank : index");
      count = w_.Index("num_pairs", "mul", share_b_ ? "%pairs_m" : "%tiles_m",
                       share_b_ ? "%tiles_n" : "%pairs_n");
    } else {
      count = w_.Index("num_tiles", "mul", "%tiles_m", "%tiles_n");
    }
    w_.Open(absl::StrFormat("for %%%s = %s to %s step %s", unit, first, count,
                            step));
    Rasterize("%" + unit);
    w_.Line(
        "// k-steps this block ran before this tile: the barrier's "
        "phase count.");
    w_.Index(unit + "_off", "sub", "%" + unit, first);
    w_.Index(unit + "_iter", "div", "%" + unit + "_off", step);
    w_.Index("it_base", "mul", "%" + unit + "_iter", "%k_tiles");
    if (zero_first_) ZeroAccumulator();
    KLoop(C(0), "%k_tiles", "%it_base");
    w_.Blank();
    Epilogue();
    w_.Close();
  } else if (split_) {
    // The two CTAs of a cluster run the same split (block z) of their
    // tiles, so their k-steps and multicast loads are the same.
    const std::string chunks = c_.split_k_skew > 0
                                   ? "skewed chunks (below)."
                                   : "chunks of cdiv(k_tiles, splits).";
    w_.Line(Clustered()
                ? "// One pair of tiles per cluster, one tile per block (x), "
                  "split s of its k-steps in block z: " +
                      chunks
                : "// One tile per block (x), split s of its k-steps in block "
                  "z: " +
                      chunks);
    BlockTile();
    w_.Line("%split = block.id z : index");
    w_.Line("%splits = grid.dim z : index");
    if (c_.split_k_skew > 0) {
      SkewedSplitRange();
    } else {
      w_.Index("kt_round", "add", "%k_tiles", "%splits");
      w_.Index("kt_round1", "sub", "%kt_round", C(1));
      w_.Index("kt_chunk", "div", "%kt_round1", "%splits");
      w_.Index("kt_begin", "mul", "%split", "%kt_chunk");
      w_.Index("kt_end_raw", "add", "%kt_begin", "%kt_chunk");
      w_.Index("kt_end", "min", "%kt_end_raw", "%k_tiles");
    }
    w_.Open("splitk %acc {dim = z} body");
    ZeroAccumulator();
    KLoop("%kt_begin", "%kt_end", "");
    w_.Reopen("epilogue");
    Epilogue();
    w_.Close();
  } else {
    w_.Line(Clustered()
                ? "// One pair of tiles per cluster, one tile per block."
                : "// One tile per block.");
    BlockTile();
    if (zero_first_) ZeroAccumulator();
    KLoop(C(0), "%k_tiles", "");
    w_.Blank();
    Epilogue();
  }
  return w_.body();
}

// Whether an operand's rows start 16 bytes off a 32-byte L2 sector (a row
// stride that is a multiple of 16 bytes but not of 32): every TMA box row
// then spans one sector more. Measured on the H100 (4096x4096xK, 128x256
// tiles): K = 4104 runs 1.43x the time of K = 4112 or 4160, whose rows are
// sector-aligned; the L2 promotion of the tensor map does not change it.
bool RowsOffSector(const MatmulProblem& problem) {
  const int64_t a_row =
      problem.a_major == OperandMajor::kK ? problem.k : problem.m;
  const int64_t b_row =
      problem.b_major == OperandMajor::kK ? problem.k : problem.n;
  const int64_t bytes = BytesOf(problem.dtype);
  return (a_row * bytes) % 32 != 0 || (b_row * bytes) % 32 != 0;
}

// The heuristic's model of one configuration's time, in k-steps of a
// 128x256 tile: waves of tiles, each running its share of the k-steps at
// the tile shape's relative efficiency, plus one k-step per tile for the
// epilogue and, with split-K, the serialized turns of the partials. The
// constants are fitted to kir-bench measurements on the H100.
struct Estimate {
  double cost = 0;
  int64_t blocks = 0;
  int64_t waves = 0;
};

Estimate EstimateTime(const MatmulProblem& problem, int tile_m, int tile_n,
                      int split_k, bool cluster_shares_b = false,
                      SplitKMode mode = SplitKMode::kSerial) {
  const bool b_n_major = problem.b_major == OperandMajor::kMN;
  // Relative throughput of a tile shape: a 128x256 tile reads 3 KiB of
  // shared memory per 64x256x16 wgmma step and its warpgroup, narrower tiles
  // the same per less work (128x128 measured at 0.92 of 128x256 on
  // 4096x11008x4096 and 4096x12288x4096); a 128x64 tile (or an N-major B,
  // whose wgmmas are 64 wide) is bound by shared-memory bandwidth.
  double efficiency = b_n_major       ? 0.65
                      : tile_n >= 256 ? 1.0
                      : tile_n >= 192 ? 0.97
                      : tile_n >= 128 ? 0.92
                                      : 0.65;
  if (tile_m < 128) efficiency *= 0.8;
  if (RowsOffSector(problem)) {
    // Loads, not wgmmas, bound such a kernel, the more so the more operand
    // bytes a tile loads per multiply (128x256: 1.43x measured; 128x128:
    // about 1.8x, which puts it behind 128x192 and 128x256).
    // A 2x1 cluster multicasts B: each CTA issues half of B's rows
    // (measured: 4095x4104x4104 with 128x192 tiles 0.278 ms against 0.316).
    const double b_share = cluster_shares_b ? 0.5 : 1.0;
    const double bytes_per_flop =
        (b_share / tile_n + 1.0 / tile_m) / (1.0 / 128 + 1.0 / 256);
    efficiency /= 1.0 + 0.43 * bytes_per_flop * bytes_per_flop;
  }
  const double area = double{1.0} * tile_m * tile_n / (128.0 * 256.0);
  const int64_t k_tiles = CeilDiv(problem.k, 64);
  Estimate estimate;
  estimate.blocks =
      (cluster_shares_b ? 2 * CeilDiv(CeilDiv(problem.m, tile_m), 2)
                        : CeilDiv(problem.m, tile_m)) *
      CeilDiv(problem.n, tile_n) * split_k;
  estimate.waves = CeilDiv(estimate.blocks, kSmCount);
  const double k_steps = static_cast<double>(CeilDiv(k_tiles, split_k));
  estimate.cost = estimate.waves * (k_steps * area / efficiency + 1.0);
  // A turn of the serial reduction (wait for the previous split, read, add
  // and write an f32 tile, release) is latency-bound: about 3 k-steps plus
  // 2 per 128x256 of tile (fitted to 256x256x65536 with 8 and 16 splits
  // and 512x1024x32768 with 4 and 8), less where skewed splits hide the
  // turns behind later mainloops: 2.5 (256x256x65536 with 12 splits and
  // skew 6 to 8 ran serial at 89-92% of cuBLASLt, 10 splits with skew 8
  // at 84-86%).
  // tma-atomic's partials reduce in L2 while later splits still compute,
  // and no split waits for another: about half a k-step per split plus
  // half per 128x256 of tile (256x256x65536 with 128x64 tiles measured at
  // 112-116% of cuBLASLt in 16 splits, 95-99% in 10, the turn modes' split
  // then).
  if (split_k > 1) {
    estimate.cost += mode == SplitKMode::kTmaAtomic
                         ? split_k * (0.5 + 0.5 * area)
                         : split_k * (2.5 + 2.0 * area);
  }
  return estimate;
}

}  // namespace

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kBF16:
      return "bf16";
    case ElementType::kF16:
      return "f16";
    case ElementType::kF32:
      return "f32";
  }
  return "bf16";
}

absl::StatusOr<ElementType> ParseElementType(absl::string_view text) {
  if (text == "bf16") return ElementType::kBF16;
  if (text == "f16") return ElementType::kF16;
  if (text == "f32") return ElementType::kF32;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown element type '", text, "' (expected bf16, f16 or f32)"));
}

const char* OperandMajorName(OperandMajor major, char operand) {
  if (major == OperandMajor::kK) return "k";
  return operand == 'a' ? "m" : "n";
}

absl::StatusOr<OperandMajor> ParseOperandMajor(absl::string_view text,
                                               char operand) {
  const char* mn = operand == 'a' ? "m" : "n";
  if (text == "k") return OperandMajor::kK;
  if (text == mn) return OperandMajor::kMN;
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown layout '%s' for %c (expected k: K contiguous, or %s: %s "
      "contiguous)",
      text, operand == 'a' ? 'A' : 'B', mn, operand == 'a' ? "M" : "N"));
}

namespace {

// Split-K mode=cluster: the f32 tile a split receives from the one before
// it lands in a buffer of its own (a peer stores into it at any time, so
// it cannot share the stages' bytes), beside its mbarrier.
int64_t ClusterLandingBytes(const MatmulConfig& config) {
  if (config.split_k == 1 || config.split_k_mode != SplitKMode::kCluster) {
    return 0;
  }
  return int64_t{config.tile_m} * config.tile_n * 4 + 16;
}

}  // namespace

int64_t SharedMemoryBytes(const MatmulProblem& problem,
                          const MatmulConfig& config) {
  const int64_t stages =
      int64_t{std::max(config.stages, 0)} * StageBytes(config);
  const int64_t epilogue = EpilogueBytes(problem, config);
  if (ResolvedEpilogue(problem, config) == EpilogueMode::kReuseMainloop) {
    return std::max(stages, epilogue) + ClusterLandingBytes(config) +
           kSharedSlack;
  }
  return stages + epilogue + ClusterLandingBytes(config) + kSharedSlack;
}

int MaxStages(const MatmulProblem& problem, const MatmulConfig& config) {
  MatmulConfig variant = config;
  for (variant.stages = 8; variant.stages >= 1; --variant.stages) {
    if (SharedMemoryBytes(problem, variant) <= kSharedMemoryBytes) {
      return variant.stages;
    }
  }
  return 0;
}

std::string ReferenceCheck(const MatmulProblem& problem) {
  const std::string a = problem.a_major == OperandMajor::kK ? "a" : "a.T";
  const std::string b = problem.b_major == OperandMajor::kK ? "b.T" : "b";
  std::string product = absl::StrCat(a, " @ ", b);
  const bool out16 = problem.out_dtype != ElementType::kF32;
  if (out16) {
    product =
        absl::StrCat(ElementTypeName(problem.out_dtype), "(", product, ")");
  }
  // Products of normal(0, 1) inputs have a spread of sqrt(K); the
  // tolerance grows with it, far below the error of a lost k-slice.
  const double atol = 1e-3 * std::sqrt(static_cast<double>(problem.k));
  return absl::StrFormat("c ~= %s rtol=%g atol=%.3g", product,
                         out16 ? 1e-2 : 1e-3, std::max(atol, 1e-3));
}

std::string LoweringPipeline(const MatmulConfig& config) {
  if (config.split_k == 1 || config.split_k_mode == SplitKMode::kSerial) {
    return "default";  // its serialize-split-k is mode=serial
  }
  return absl::StrCat("serialize-split-k{mode=",
                      SplitKModeName(config.split_k_mode), "},default");
}

std::string RunDirective(const MatmulProblem& problem,
                         const MatmulConfig& config) {
  // Split-K kernels reset their semaphores and counters themselves: zeroing
  // the workspaces once makes every later launch (kir-bench's timing among
  // them) run as the kernel would in use, with no memset between launches.
  return absl::StrFormat(
      "// run: %spipeline='%s' @%s M=%d N=%d K=%d a=normal(seed=1) "
      "b=normal(seed=2) c=fill(nan) => %s",
      config.split_k > 1 ? "workspace=once " : "", LoweringPipeline(config),
      kKernelName, problem.m, problem.n, problem.k, ReferenceCheck(problem));
}

absl::Status ValidateMatmul(const MatmulProblem& problem,
                            const MatmulConfig& config) {
  for (auto [name, size] : {std::pair<char, int64_t>{'M', problem.m},
                            {'N', problem.n},
                            {'K', problem.k}}) {
    if (size < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%c = %d: sizes must be at least 1", name, size));
    }
    if (size >= kMaxDimension) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%c = %d: a TMA tensor dimension is at most 2^32 - 1", name, size));
    }
  }
  if (problem.dtype == ElementType::kF32) {
    return absl::InvalidArgumentError(
        "--dtype f32: wgmma multiplies bf16 or f16 operands here (f32 is an "
        "output type only)");
  }
  // TMA describes each tensor with a row stride in bytes that is a multiple
  // of 16: the contiguous dimension of each.
  const bool a_k = problem.a_major == OperandMajor::kK;
  const bool b_k = problem.b_major == OperandMajor::kK;
  if (absl::Status s =
          CheckRowStride("A", a_k ? "K-major" : "M-major", a_k ? 'K' : 'M',
                         a_k ? problem.k : problem.m, problem.dtype);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckRowStride("B", b_k ? "K-major" : "N-major", b_k ? 'K' : 'N',
                         b_k ? problem.k : problem.n, problem.dtype);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckRowStride("C", "row-major (N contiguous)", 'N',
                                      problem.n, problem.out_dtype);
      !s.ok()) {
    return s;
  }

  if (config.cluster_m != 1 || config.cluster_n != 1) {
    if (!((config.cluster_m == 2 && config.cluster_n == 1) ||
          (config.cluster_m == 1 && config.cluster_n == 2))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cluster %dx%d: 1x1, 2x1 (two tiles of a tile column share B) or "
          "1x2 (two tiles of a tile row share A)",
          config.cluster_m, config.cluster_n));
    }
    if (config.circular_buffer != "warp_specialized") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cluster %dx%d with --circular-buffer %s: multicast loads need "
          "warp_specialized (a producer role that issues every CTA's share)",
          config.cluster_m, config.cluster_n, config.circular_buffer));
    }
  }
  if (config.consumer_warpgroups != 1 && config.consumer_warpgroups != 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d consumer warpgroups: 1 or 2 (each computes 64 rows of the tile)",
        config.consumer_warpgroups));
  }
  if (config.pingpong) {
    if (absl::Status s = ValidatePingPong(config); !s.ok()) return s;
  } else if (config.tile_m != 64 * config.consumer_warpgroups) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tile M = %d: must be 64 per consumer warpgroup (%d with %d); "
        "tiles are 64x... or 128x...",
        config.tile_m, 64 * config.consumer_warpgroups,
        config.consumer_warpgroups));
  }
  if (config.tile_n < 64 || config.tile_n > 256 || config.tile_n % 64 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tile N = %d: must be 64, 128, 192 or 256 (wgmma's N is at most 256; "
        "the output and N-major operands go in 64-column sub-tiles)",
        config.tile_n));
  }
  if (config.tile_k != 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tile K = %d: must be 64 (one 128-byte swizzle span of 16-bit "
        "elements, the k-slice width TMA and wgmma share)",
        config.tile_k));
  }
  if (config.stages < 1 || config.stages > 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d stages: circular buffering takes 1 to 16", config.stages));
  }
  if (config.raster_group < 1 || config.raster_group > 65536) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "raster group %d: must be 1 to 65536 tile rows", config.raster_group));
  }
  if (config.circular_buffer != "warp_specialized" &&
      config.circular_buffer != "pipelined") {
    return absl::InvalidArgumentError(
        absl::StrCat("circular buffer mode '", config.circular_buffer,
                     "': warp_specialized or pipelined"));
  }
  if (config.split_k < 1 || config.split_k > 65535) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "split-K %d: must be 1 to 65535 (the grid's z dimension)",
        config.split_k));
  }
  if (config.split_k > 1) {
    const int64_t k_tiles = CeilDiv(problem.k, config.tile_k);
    if (config.split_k > k_tiles) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "split-K %d: K = %d has only %d k-steps of %d; every split needs "
          "at least one",
          config.split_k, problem.k, k_tiles, config.tile_k));
    }
    if (config.split_k_skew < 0 ||
        (config.split_k_skew > 0 && int64_t{config.split_k_skew} *
                                            config.split_k *
                                            (config.split_k - 1) / 2 >
                                        k_tiles - config.split_k)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "split skew %d with %d splits: the skew takes %d k-steps of K = "
          "%d's %d, and every split needs at least one; use a smaller skew",
          config.split_k_skew, config.split_k,
          int64_t{config.split_k_skew} * config.split_k * (config.split_k - 1) /
              2,
          problem.k, k_tiles));
    }
    if (config.split_k_mode == SplitKMode::kCluster) {
      if (config.split_k > 8) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "split-K %d with mode cluster: the splits of a tile are one "
            "cluster, and a portable cluster holds at most 8 CTAs",
            config.split_k));
      }
      if (config.cluster_m * config.cluster_n > 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "split-K mode cluster with a %dx%d cluster: the splits of a "
            "tile make the cluster, so it cannot also hold neighbouring "
            "tiles; use 1x1",
            config.cluster_m, config.cluster_n));
      }
    }
    if (config.epilogue == EpilogueMode::kDedicated) {
      return absl::InvalidArgumentError(
          "--epilogue dedicated with split-K: a dedicated epilogue buffer "
          "overlaps the next tile's mainloop in the persistent grid, and "
          "split-K's grid is not persistent (`splitk` may not sit in a "
          "loop); use reuse");
    }
  }
  const int64_t bytes = SharedMemoryBytes(problem, config);
  if (bytes > kSharedMemoryBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tile %dx%dx%d with %d stages and a %s epilogue needs about %d bytes "
        "of shared memory (%d per stage, %d for output sub-tiles), more than "
        "the %d a block can use; use fewer stages or a smaller tile",
        config.tile_m, config.tile_n, config.tile_k, config.stages,
        EpilogueName(ResolvedEpilogue(problem, config)), bytes,
        StageBytes(config), EpilogueBytes(problem, config),
        kSharedMemoryBytes));
  }
  return absl::OkStatus();
}

// Measured on the H200 (testdata/bench/splitk_skew.csv, two runs): with
// 128x64 tiles, 256x256x65536 in 10 splits went from 76-77% of cuBLASLt
// (serial) and 72-73% (tma-serial) without skew to 86-87% and 84-86% with
// 8, and 128x1024x65536 in 8 splits from 91-93% to 98%; 512x1024x32768
// (128x128 tiles, 4 splits) from 90-93% to 94-95% with 4. Larger skews
// lose again: the last split's own mainloop grows past the turns it hides.
int ChooseSplitSkew(const MatmulProblem& problem, const MatmulConfig& config) {
  if (config.split_k < 2 || (config.split_k_mode != SplitKMode::kSerial &&
                             config.split_k_mode != SplitKMode::kTmaSerial)) {
    return 0;
  }
  const int64_t k_tiles =
      CeilDiv(std::max<int64_t>(problem.k, 1), config.tile_k);
  const int64_t pairs = int64_t{config.split_k} * (config.split_k - 1) / 2;
  int skew = std::max(1, 512 / std::max(config.tile_n, 1));
  while (skew > 0 && skew * pairs > k_tiles / 2) --skew;
  return skew;
}

MatmulConfig ChooseConfig(const MatmulProblem& problem,
                          std::string* explanation, SplitKMode split_k_mode) {
  std::vector<std::string> why;
  MatmulConfig config;
  // Tile and split-K: the candidate with the least modelled time.
  struct Candidate {
    int tile_n;
    int split_k;
    Estimate estimate;
    bool cluster = false;
  };
  std::vector<Candidate> candidates;
  const int64_t k_tiles = CeilDiv(std::max<int64_t>(problem.k, 1), 64);
  const int64_t tile_count_m = CeilDiv(problem.m, 128);
  for (int tile_n : {256, 192, 128, 64}) {
    const int64_t tile_count = tile_count_m * CeilDiv(problem.n, tile_n);
    for (int split_k = 1; split_k <= 32; ++split_k) {
      // At least 4 k-steps per split, and no more blocks than two waves.
      if (split_k > 1 && k_tiles / split_k < 4) break;
      Estimate estimate = EstimateTime(problem, 128, tile_n, split_k);
      if (split_k > 1 && estimate.blocks > 2 * kSmCount) break;
      candidates.push_back({tile_n, split_k, estimate});
      // Rows off the sectors make loads the bound: a 2x1 cluster that
      // multicasts B halves each CTA's load requests for it (the two CTAs
      // run the same split of vertically adjacent tiles). Only with half
      // a wave of blocks or more: a small grid is not bound by its loads'
      // issue. Measured on 3648x480x8632: 128x256 tiles in 2 splits with
      // the cluster 85-89% of cuBLASLt, without it 73-74%; 128x128 tiles
      // with the cluster and no split 68-72%.
      if (RowsOffSector(problem) && tile_count_m >= 2 &&
          tile_count * split_k >= kSmCount / 2) {
        candidates.push_back({tile_n, split_k,
                              EstimateTime(problem, 128, tile_n, split_k, true),
                              true});
      }
    }
  }
  const Candidate* best = &candidates.front();
  for (const Candidate& candidate : candidates) {
    if (candidate.estimate.cost < best->estimate.cost * 0.999) {
      best = &candidate;
    }
  }
  // tma-atomic: the candidates again with its cheaper reduction. Where the
  // problem is bound by loading its operands (fewer than about 200 flops
  // per byte of A and B read once: the H200's ridge, 990 TFLOP/s over
  // 4.8 TB/s, and under the H100's), the model, which counts wgmma work,
  // cannot tell tiles apart: there only the split count is chosen again,
  // for the tile the turn modes' costs chose. Measured with tma-atomic:
  // 128x8192x8192 (126 flops per byte) with 128x256 tiles in 4 splits
  // 87% of cuBLASLt, 128x128 in 2 97%; 512x1024x32768 (341) with 128x256
  // in 8 splits 100.3-102.2%, 128x128 in 4 98.0-98.7% (three pairs in one
  // run); 1024x1024x16384 (512) with 128x256 in 4 splits 101.1-101.8%,
  // 128x128 in 2 100.8-101.3%.
  const double flops = 2.0 * problem.m * problem.n * problem.k;
  const double operand_bytes =
      1.0 * (problem.m + problem.n) * problem.k * BytesOf(problem.dtype);
  const bool load_bound = flops < 200.0 * operand_bytes;
  const Candidate* turn_best = best;
  if (split_k_mode == SplitKMode::kTmaAtomic) {
    auto considered = [&](const Candidate& candidate) {
      return !load_bound || (candidate.tile_n == turn_best->tile_n &&
                             candidate.cluster == turn_best->cluster);
    };
    for (Candidate& candidate : candidates) {
      if (!considered(candidate)) continue;
      candidate.estimate =
          EstimateTime(problem, 128, candidate.tile_n, candidate.split_k,
                       candidate.cluster, SplitKMode::kTmaAtomic);
    }
    const Candidate* atomic_best = nullptr;
    for (const Candidate& candidate : candidates) {
      if (!considered(candidate)) continue;
      if (atomic_best == nullptr ||
          candidate.estimate.cost < atomic_best->estimate.cost * 0.999)
        atomic_best = &candidate;
    }
    best = atomic_best;
  }
  // A load-bound problem whose unsplit tiles fill one wave (at least 90%
  // of the SMs) is not split, in any mode: its time is that of loading B
  // once, which a split does not shorten, and the hand-over of partials
  // adds to it. The model's tile efficiencies, which count wgmma and
  // shared-memory work, put such narrow tiles behind a split of wider
  // ones. Measured on the H200 (testdata/bench/splitk_8192_pairs.csv, four
  // pairs in one run): 128x8192x8192 with 128x64 tiles unsplit took
  // 0.0465-0.0484 ms, 128x128 tiles in 2 splits 0.0482-0.0522 ms (serial,
  // skewed) and 0.0478-0.0504 ms (tma-atomic).
  bool fills_without_split = false;
  if (load_bound && best->split_k > 1) {
    for (const Candidate& candidate : candidates) {
      if (candidate.split_k != 1 || candidate.cluster ||
          candidate.estimate.blocks > kSmCount ||
          10 * candidate.estimate.blocks < 9 * kSmCount) {
        continue;
      }
      // The widest such tile (the candidates go from wide to narrow).
      best = &candidate;
      fills_without_split = true;
      break;
    }
  }
  config.tile_m = 128;
  config.tile_n = best->tile_n;
  config.split_k = best->split_k;
  if (config.split_k > 1) config.split_k_mode = split_k_mode;
  if (best->cluster) config.cluster_m = 2;
  const int64_t tiles =
      CeilDiv(problem.m, 128) * CeilDiv(problem.n, config.tile_n);
  if (fills_without_split) {
    why.push_back(absl::StrFormat(
        "tile 128x%dx64: %d tiles, %d wave(s) of %d SMs; the widest tile "
        "whose grid fills one wave without a split, since the problem is "
        "load-bound (%.0f flops per byte of A and B, under 200)",
        config.tile_n, tiles, best->estimate.waves, kSmCount,
        flops / operand_bytes));
  } else {
    why.push_back(absl::StrFormat(
        "tile 128x%dx64: %d tiles, %d wave(s) of %d SMs; the least modelled "
        "time (wave count x k-steps / tile efficiency) of 128x256, 128x192, "
        "128x128 and 128x64",
        config.tile_n, tiles, best->estimate.waves, kSmCount));
  }
  if (config.split_k > 1) {
    why.push_back(absl::StrFormat(
        "split-K %d (%s): %d tiles leave SMs idle; %d splits of %d "
        "k-steps make %d blocks, worth the %s of partials",
        config.split_k, SplitKModeName(config.split_k_mode), tiles,
        config.split_k, CeilDiv(k_tiles, config.split_k),
        tiles * config.split_k,
        config.split_k_mode == SplitKMode::kTmaAtomic
            ? "reduction"
            : "serialized reduction"));
    config.split_k_skew = ChooseSplitSkew(problem, config);
    if (config.split_k_skew > 0) {
      why.push_back(absl::StrFormat(
          "split skew %d: split z runs %d k-step(s) more than split z-1, so "
          "the splits finish in the order of their turns and each turn "
          "hides behind the next split's longer mainloop",
          config.split_k_skew, config.split_k_skew));
    }
  } else {
    why.push_back(absl::StrFormat(
        "no split-K: %s",
        fills_without_split
            ? "a split would not shorten the loads of a load-bound "
              "problem and would add the hand-over of partials"
        : tiles >= kSmCount ? "the tiles fill every SM"
                            : "splitting K costs more (serialized partial "
                              "reductions, short k loops) than it gains"));
  }
  // Epilogue, and with it the grid.
  if (config.split_k > 1) {
    config.epilogue = EpilogueMode::kReuseMainloop;
    why.push_back(
        "epilogue reuse: split-K's grid has one tile per block, so the "
        "output tile can take the bytes of the mainloop's stages");
  } else if (tiles <= kSmCount) {
    config.epilogue = EpilogueMode::kReuseMainloop;
    why.push_back(absl::StrFormat(
        "epilogue reuse: %d tiles fit one wave, so each block computes one "
        "tile (a grid of tiles, not persistent) and the output tile shares "
        "the stages' bytes, leaving room for more stages",
        tiles));
  } else {
    config.epilogue = EpilogueMode::kDedicated;
    why.push_back(absl::StrFormat(
        "epilogue dedicated: %d tiles over %d SMs, so a persistent grid; the "
        "output goes through a ring of two sub-tile buffers of its own, so "
        "each sub-tile's TMA store overlaps the next one's writes and the "
        "producer loads the block's next tile meanwhile",
        tiles, kSmCount));
  }
  // Stages: as many as fit, at most 8.
  const int64_t output = config.epilogue == EpilogueMode::kDedicated
                             ? EpilogueBytes(problem, config)
                             : 0;
  config.stages = std::max(1, MaxStages(problem, config));
  if (RowsOffSector(problem) && config.stages > 3) {
    // Measured: with rows off the 32-byte sectors, 3 stages ran 3-6% faster
    // than 4 (128x192 and 128x256 on 4095x4104x4104, 128x256 with 2 splits
    // on 3648x480x8632), fewer misaligned loads being in flight at once.
    config.stages = 3;
    why.push_back(absl::StrFormat(
        "3 stages: an operand's rows are 16 bytes off the 32-byte sectors "
        "(its row stride is not a multiple of 32 bytes), so each TMA box row "
        "spans one sector more and loads bound the kernel; 3 stages measured "
        "faster than the %d that fit",
        MaxStages(problem, config)));
  } else {
    why.push_back(absl::StrFormat(
        "%d stages: %d bytes per stage%s, as many as fit in %d bytes (at "
        "most 8)",
        config.stages, StageBytes(config),
        output > 0
            ? absl::StrFormat(" beside %d bytes of output buffers", output)
            : "",
        kSharedMemoryBytes));
  }
  why.push_back(
      "cooperative, 2 consumer warpgroups of 64 rows each (ping-pong, two "
      "warpgroups taking whole tiles in turn, is available by option: "
      "--pingpong)");
  why.push_back(
      config.cluster_m == 2
          ? "cluster 2x1: an operand's rows are off the 32-byte sectors, so "
            "loads bound the kernel; two CTAs computing vertically adjacent "
            "tiles multicast B, each issuing half of its rows (measured: "
            "4095x4104x4104 at 89.7% of cuBLASLt against 78.6% without)"
          : "cluster 1x1 (--cluster 2x1 or 1x2 pairs neighbouring tiles and "
            "multicasts the operand they share; the heuristic takes 2x1 "
            "where rows off the 32-byte sectors make loads the bound)");
  why.push_back(absl::StrFormat(
      "circular buffer warp_specialized: a producer warpgroup issues the "
      "loads; rasterized in groups of %d tile rows so that concurrent "
      "blocks share A and B in L2",
      config.raster_group));
  if (explanation != nullptr) {
    *explanation = absl::StrCat(absl::StrJoin(why, "\n"), "\n");
  }
  return config;
}

absl::StatusOr<SplitKMode> ParseSplitKMode(absl::string_view text) {
  for (SplitKMode mode :
       {SplitKMode::kSerial, SplitKMode::kTmaSerial, SplitKMode::kTmaAtomic,
        SplitKMode::kCluster, SplitKMode::kGather}) {
    if (text == SplitKModeName(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("split-K mode '", text,
                   "': serial, tma-serial, tma-atomic, cluster or gather"));
}

absl::StatusOr<EpilogueMode> ParseEpilogueMode(absl::string_view text) {
  for (EpilogueMode mode : {EpilogueMode::kAuto, EpilogueMode::kReuseMainloop,
                            EpilogueMode::kDedicated}) {
    if (text == EpilogueName(mode)) return mode;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("epilogue '", text, "': reuse, dedicated or auto"));
}

std::string DescribeConfig(const MatmulConfig& config) {
  std::string text = absl::StrFormat(
      "%dx%dx%d s%d %s %s wg%d c%dx%d r%d epi=%s", config.tile_m, config.tile_n,
      config.tile_k, config.stages,
      config.circular_buffer == "pipelined" ? "pipe" : "ws",
      config.pingpong ? "pingpong" : "coop", config.consumer_warpgroups,
      config.cluster_m, config.cluster_n, config.raster_group,
      EpilogueName(config.epilogue));
  if (config.split_k > 1) {
    absl::StrAppend(&text, " splitk=", config.split_k, "/",
                    SplitKModeName(config.split_k_mode));
    if (config.split_k_skew > 0) {
      absl::StrAppend(&text, " skew=", config.split_k_skew);
    }
  }
  return text;
}

absl::StatusOr<MatmulConfig> ParseConfig(absl::string_view text) {
  MatmulConfig config;
  std::set<std::string> seen;
  auto error = [&](absl::string_view token, absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("configuration '", text, "': '", token, "' ", why));
  };
  auto two = [](absl::string_view token, int* a, int* b) {
    std::vector<absl::string_view> parts = absl::StrSplit(token, 'x');
    return parts.size() == 2 && absl::SimpleAtoi(parts[0], a) &&
           absl::SimpleAtoi(parts[1], b);
  };
  bool have_tile = false;
  for (absl::string_view token :
       absl::StrSplit(text, ' ', absl::SkipWhitespace())) {
    std::string kind;
    bool ok = true;
    if (std::count(token.begin(), token.end(), 'x') == 2) {
      kind = "tile";
      std::vector<absl::string_view> parts = absl::StrSplit(token, 'x');
      ok = absl::SimpleAtoi(parts[0], &config.tile_m) &&
           absl::SimpleAtoi(parts[1], &config.tile_n) &&
           absl::SimpleAtoi(parts[2], &config.tile_k);
      have_tile = true;
    } else if (token == "ws" || token == "pipe") {
      kind = "mode";
      config.circular_buffer = token == "ws" ? "warp_specialized" : "pipelined";
    } else if (token == "coop" || token == "pingpong") {
      kind = "schedule";
      config.pingpong = token == "pingpong";
    } else if (absl::ConsumePrefix(&token, "epi=")) {
      kind = "epi";
      absl::StatusOr<EpilogueMode> mode = ParseEpilogueMode(token);
      if (!mode.ok()) return error(token, "is not an epilogue mode");
      config.epilogue = *mode;
    } else if (absl::ConsumePrefix(&token, "splitk=")) {
      kind = "splitk";
      std::vector<absl::string_view> parts = absl::StrSplit(token, '/');
      ok = parts.size() == 2 && absl::SimpleAtoi(parts[0], &config.split_k);
      if (ok) {
        absl::StatusOr<SplitKMode> mode = ParseSplitKMode(parts[1]);
        if (!mode.ok()) return error(parts[1], "is not a split-K mode");
        config.split_k_mode = *mode;
      }
    } else if (absl::ConsumePrefix(&token, "skew=")) {
      kind = "skew";
      ok = absl::SimpleAtoi(token, &config.split_k_skew);
    } else if (absl::ConsumePrefix(&token, "wg")) {
      kind = "wg";
      ok = absl::SimpleAtoi(token, &config.consumer_warpgroups);
    } else if (absl::ConsumePrefix(&token, "s")) {
      kind = "stages";
      ok = absl::SimpleAtoi(token, &config.stages);
    } else if (absl::ConsumePrefix(&token, "r")) {
      kind = "raster";
      ok = absl::SimpleAtoi(token, &config.raster_group);
    } else if (absl::ConsumePrefix(&token, "c")) {
      kind = "cluster";
      ok = two(token, &config.cluster_m, &config.cluster_n);
    } else {
      return error(token, "is not part of a configuration");
    }
    if (!ok) return error(token, "is malformed");
    if (!seen.insert(kind).second) return error(token, "repeats a setting");
  }
  if (!have_tile) {
    return absl::InvalidArgumentError(absl::StrCat(
        "configuration '", text, "' names no tile (e.g. 128x256x64)"));
  }
  return config;
}

absl::StatusOr<std::string> GenerateMatmul(const MatmulProblem& problem,
                                           const MatmulConfig& requested) {
  if (absl::Status status = ValidateMatmul(problem, requested); !status.ok()) {
    return status;
  }
  MatmulConfig config = requested;
  config.epilogue = ResolvedEpilogue(problem, requested);
  const std::string a_layout = problem.a_major == OperandMajor::kK
                                   ? "A MxK (K contiguous)"
                                   : "A stored KxM (M contiguous)";
  const std::string b_layout = problem.b_major == OperandMajor::kK
                                   ? "B NxK (K contiguous)"
                                   : "B stored KxN (N contiguous)";
  std::string text = absl::StrFormat(
      "// Generated by kir-gen: C = A @ B^T for %dx%dx%d (M x N x K), %s and "
      "%s in %s, C MxN in %s, f32 accumulation.\n"
      "// a_major=%s b_major=%s; configuration: %s.\n"
      "//\n"
      "// Reading: unlowered (ir/language.md, \"Two readings\"), the form of\n"
      "// testdata/examples/ws_gemm.kir: one mbarrier for the TMA loads of a\n"
      "// k-step (the author's protocol), the k loop marked for circular\n"
      "// buffering; the default pipeline adds stages, roles, barriers and\n"
      "// fences. %s\n"
      "%s\n\n",
      problem.m, problem.n, problem.k, a_layout, b_layout,
      ElementTypeName(problem.dtype), ElementTypeName(problem.out_dtype),
      OperandMajorName(problem.a_major, 'a'),
      OperandMajorName(problem.b_major, 'b'), DescribeConfig(config),
      config.split_k > 1
          ? absl::StrFormat("Split-K: %d splits over grid z (`splitk`, "
                            "serialize-split-k mode=%s), one tile per block.",
                            config.split_k, SplitKModeName(config.split_k_mode))
      : config.pingpong
          ? "Ping-pong: written for one\n// warpgroup computing whole "
            "tiles; circular-buffer makes two consumer\n// warpgroups that "
            "take the block's tiles in turn, each with its own\n// output "
            "buffers."
      : Persistent(config)
          ? "Persistent: one block per SM walks the tiles; the output tile "
            "has its own buffer."
          : "One tile per block; the output tile may share the stages' "
            "bytes.",
      RunDirective(problem, config));
  MatmulWriter writer(problem, config);
  const std::string body = writer.Write();
  absl::StrAppend(&text, writer.Header(), writer.Constants(), body, "}\n");
  return text;
}

}  // namespace kir::gen
