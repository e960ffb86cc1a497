#include "tools/kir-check/generator.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kir::check {
namespace {

constexpr int kInRows = 64;  // %in: global f32[64, 32], read only

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed), seed_(seed) {}

  std::string Generate();

 private:
  struct Buffer {
    std::string name;
    int swizzle = 0;
  };
  // Who runs a phase: the block or a role.
  struct Context {
    int threads = 0;
    std::string tid;     // the thread's index in the context
    std::string issuer;  // i1: the context's first thread
    std::vector<int> buffers;
    // Inside a loop: its variable and trip count.
    std::string loop;
    int trips = 1;
    bool loop_has_tma_load = false;
  };

  int Pick(int n) {
    return static_cast<int>(rng_() % static_cast<uint64_t>(n));
  }
  bool Chance(int percent) { return Pick(100) < percent; }
  std::string Fresh(const std::string& hint) {
    return absl::StrCat("%", hint, counter_++);
  }
  std::string Index(int64_t value) {
    const std::string name =
        absl::StrCat("%c", value < 0 ? "m" : "", std::llabs(value));
    if (defined_.insert(name).second)
      header_.push_back(
          absl::StrCat("  ", name, " = const ", value, " : index"));
    return name;
  }
  std::string Float(const char* text, const char* hint) {
    const std::string name = absl::StrCat("%", hint);
    if (defined_.insert(name).second)
      header_.push_back(absl::StrCat("  ", name, " = const ", text, " : f32"));
    return name;
  }
  void Line(const std::string& text) {
    body_.push_back(std::string(2 * indent_, ' ') + text);
  }
  void Open(const std::string& text) {
    Line(text);
    ++indent_;
  }
  void Close() {
    --indent_;
    Line("}");
  }
  int AllocRows(int rows) {
    const int base = rows_per_block_;
    rows_per_block_ += rows;
    return base;
  }
  int NewBuffer(bool tma_capable) {
    Buffer buffer;
    buffer.name = Fresh("s");
    buffer.swizzle = tma_capable && Chance(40) ? 128 : 0;
    const int pad = !tma_capable && Chance(30) ? 1 : 0;
    allocs_.push_back(absl::StrCat(
        "  ", buffer.name, " = alloc.shared {align = ",
        buffer.swizzle ? 1024 : 128, buffer.swizzle ? ", swizzle = 128" : "",
        pad ? ", pad = 1" : "", "} : shared f32[", rows_, ", 32]"));
    tma_capable_.push_back(tma_capable && pad == 0);
    buffers_.push_back(buffer);
    return static_cast<int>(buffers_.size()) - 1;
  }
  std::string Map(const char* tensor, int swizzle) {
    const std::string name = absl::StrCat("%", tensor, "_map", swizzle);
    if (maps_.insert(name).second) {
      params_.push_back(absl::StrCat(name, ": tensormap f32[", rows_,
                                     ", 32] of %", tensor,
                                     swizzle ? " {swizzle = 128}" : ""));
    }
    return name;
  }

  // Every thread of `context` visits its share of the R x 32 elements of a
  // buffer: `body(row, column, flat)` is emitted once in a loop, or once per
  // element, unrolled (a loop's body may get a barrier, and the fences the
  // passes place around it are what this shape tests).
  template <typename Body>
  void ForElements(const Context& context, Body&& body) {
    const int per_thread = rows_ * 32 / context.threads;
    const bool unrolled = per_thread <= 4 && Chance(60);
    std::string i;
    if (!unrolled) {
      i = Fresh("i");
      Open(absl::StrCat("for ", i, " = ", Index(0), " to ", Index(per_thread),
                        " step ", Index(1), " {"));
    }
    for (int k = 0; k < (unrolled ? per_thread : 1); ++k) {
      std::string flat = Fresh("flat");
      if (unrolled) {
        Line(absl::StrCat(flat, " = add ", context.tid, ", ",
                          Index(k * context.threads), " : index"));
      } else {
        const std::string step = Fresh("f");
        Line(absl::StrCat(step, " = mul ", i, ", ", Index(context.threads),
                          " : index"));
        Line(
            absl::StrCat(flat, " = add ", step, ", ", context.tid, " : index"));
      }
      const std::string row = Fresh("r"), column = Fresh("col");
      Line(absl::StrCat(row, " = div ", flat, ", ", Index(32), " : index"));
      Line(absl::StrCat(column, " = rem ", flat, ", ", Index(32), " : index"));
      body(row, column, flat);
    }
    if (!unrolled) Close();
  }

  // A value derived from `v` (and the loop variable, inside a loop).
  std::string Transform(const Context& context, const std::string& v) {
    const std::string w = Fresh("v");
    switch (Pick(4)) {
      case 0:
        Line(
            absl::StrCat(w, " = mul ", v, ", ", Float("2.0", "two"), " : f32"));
        break;
      case 1:
        Line(absl::StrCat(w, " = add ", v, ", ", Float("1.5", "onehalf"),
                          " : f32"));
        break;
      case 2:
        if (!context.loop.empty()) {
          const std::string it = Fresh("itf");
          Line(absl::StrCat(it, " = cast ", context.loop, " : f32"));
          Line(absl::StrCat(w, " = add ", v, ", ", it, " : f32"));
          break;
        }
        [[fallthrough]];
      default:
        Line(absl::StrCat(w, " = neg ", v, " : f32"));
        break;
    }
    return w;
  }

  void LoadGeneric(Context& context, int buffer) {
    const int row_in = Pick(kInRows - rows_ + 1);
    ForElements(context, [&](const std::string& row, const std::string& column,
                             const std::string&) {
      const std::string global_row = Fresh("gr");
      Line(absl::StrCat(global_row, " = add ", row, ", ", Index(row_in),
                        " : index"));
      const std::string v = Fresh("v");
      Line(
          absl::StrCat(v, " = load %in[", global_row, ", ", column, "] : f32"));
      const std::string w = Transform(context, v);
      Line(absl::StrCat("store ", buffers_[buffer].name, "[", row, ", ", column,
                        "], ", w));
    });
  }

  void LoadTma(Context& context, int buffer) {
    // Each load site has an mbarrier of its own (inited at the kernel's
    // start): outside loops it completes one phase, in a loop one per
    // iteration, parity the iteration's. Sharing one between sites is the
    // known phase-reuse shape (the findings' mbarrier_phase_reuse).
    const Buffer& b = buffers_[buffer];
    const std::string bar = Index(barriers_++);
    Open(absl::StrCat("if ", context.issuer, " {"));
    Line(absl::StrCat("mbarrier.arrive_tx %bar[", bar,
                      "] {bytes = ", rows_ * 32 * 4, "}"));
    Line(absl::StrCat("tma.load ", b.name, "[", Index(0), ", ", Index(0), "], ",
                      Map("in", b.swizzle), "[",
                      Index(Pick(kInRows - rows_ + 1)), ", ", Index(0),
                      "], %bar[", bar, "]"));
    Close();
    std::string parity = Index(0);
    if (!context.loop.empty()) {
      parity = Fresh("par");
      Line(absl::StrCat(parity, " = rem ", context.loop, ", ", Index(2),
                        " : index"));
      context.loop_has_tma_load = true;
    }
    Line(absl::StrCat("mbarrier.wait %bar[", bar, "], ", parity));
  }

  void Compute(Context& context, int source, int destination) {
    const int elements = rows_ * 32;
    const bool reverse = Chance(50);
    const int shift = 1 + Pick(elements - 1);
    const bool add = Chance(50);
    const bool guarded = Chance(30);
    const int bound = 8 * (1 + Pick(context.threads / 8));
    ForElements(context, [&](const std::string& row, const std::string& column,
                             const std::string& flat) {
      const std::string q = Fresh("q");
      if (reverse) {
        Line(absl::StrCat(q, " = sub ", Index(elements - 1), ", ", flat,
                          " : index"));
      } else {
        const std::string shifted = Fresh("sh");
        Line(absl::StrCat(shifted, " = add ", flat, ", ", Index(shift),
                          " : index"));
        Line(absl::StrCat(q, " = rem ", shifted, ", ", Index(elements),
                          " : index"));
      }
      const std::string qr = Fresh("qr"), qc = Fresh("qc");
      Line(absl::StrCat(qr, " = div ", q, ", ", Index(32), " : index"));
      Line(absl::StrCat(qc, " = rem ", q, ", ", Index(32), " : index"));
      const std::string a = Fresh("a");
      Line(absl::StrCat(a, " = load ", buffers_[source].name, "[", qr, ", ", qc,
                        "] : f32"));
      std::string value = a;
      if (add) {
        const std::string b = Fresh("b");
        Line(absl::StrCat(b, " = load ", buffers_[destination].name, "[", row,
                          ", ", column, "] : f32"));
        value = Fresh("v");
        Line(absl::StrCat(value, " = add ", a, ", ", b, " : f32"));
      }
      value = Transform(context, value);
      if (guarded) {
        // Only some threads write: a thread-dependent condition.
        const std::string condition = Fresh("g");
        Line(absl::StrCat(condition, " = cmp lt ", context.tid, ", ",
                          Index(bound), " : i1"));
        Open(absl::StrCat("if ", condition, " {"));
      }
      Line(absl::StrCat("store ", buffers_[destination].name, "[", row, ", ",
                        column, "], ", value));
      if (guarded) Close();
    });
  }

  // The first output row of a phase: the block's region, the phase's
  // rows, and the loop's iteration.
  std::string OutputRow(const Context& context, int rows) {
    const int base = AllocRows(rows * context.trips);
    const std::string row = Fresh("orow");
    Line(absl::StrCat(row, " = add %block_row, ", Index(base), " : index"));
    if (context.loop.empty()) return row;
    const std::string step = Fresh("ost");
    Line(absl::StrCat(step, " = mul ", context.loop, ", ", Index(rows),
                      " : index"));
    const std::string moved = Fresh("orow");
    Line(absl::StrCat(moved, " = add ", row, ", ", step, " : index"));
    return moved;
  }

  // Rows of %tout, like OutputRow's of %out.
  std::string TmaOutputRow(const Context& context) {
    const int base = tma_rows_per_block_;
    tma_rows_per_block_ += rows_ * context.trips;
    const std::string row = Fresh("trow");
    Line(absl::StrCat(row, " = add %tma_block_row, ", Index(base), " : index"));
    if (context.loop.empty()) return row;
    const std::string step = Fresh("ost");
    Line(absl::StrCat(step, " = mul ", context.loop, ", ", Index(rows_),
                      " : index"));
    const std::string moved = Fresh("trow");
    Line(absl::StrCat(moved, " = add ", row, ", ", step, " : index"));
    return moved;
  }

  void StoreGeneric(Context& context, int buffer) {
    const std::string base = OutputRow(context, rows_);
    ForElements(context, [&](const std::string& row, const std::string& column,
                             const std::string&) {
      const std::string v = Fresh("v");
      Line(absl::StrCat(v, " = load ", buffers_[buffer].name, "[", row, ", ",
                        column, "] : f32"));
      const std::string global_row = Fresh("gr");
      Line(absl::StrCat(global_row, " = add ", base, ", ", row, " : index"));
      Line(absl::StrCat("store %out[", global_row, ", ", column, "], ", v));
    });
  }

  bool StoreTma(Context& context, int buffer) {
    if (!tma_capable_[buffer]) return false;
    // Its own output tensor: insert-async-waits rejects a generic access
    // of a tensor a pending TMA store writes, even of other rows.
    const std::string row = TmaOutputRow(context);
    Open(absl::StrCat("if ", context.issuer, " {"));
    Line(absl::StrCat("tma.store ", Map("tout", buffers_[buffer].swizzle), "[",
                      row, ", ", Index(0), "], ", buffers_[buffer].name, "[",
                      Index(0), ", ", Index(0), "]"));
    Close();
    return true;
  }

  // One phase of `context`: a load, a computation or a store, or a loop
  // of them.
  void Phase(Context& context, int depth) {
    // Large kernels cost the passes more time than they find (their
    // analyses grow with the body): a budget of lines.
    if (body_.size() > 240) return;
    const std::vector<int>& owned = context.buffers;
    const int a = owned[Pick(static_cast<int>(owned.size()))];
    const int b = owned[Pick(static_cast<int>(owned.size()))];
    switch (Pick(depth == 0 ? 6 : 5)) {
      case 0:
        LoadGeneric(context, a);
        return;
      case 1:
        if (tma_capable_[a] && !context.loop_has_tma_load) {
          LoadTma(context, a);
          return;
        }
        LoadGeneric(context, a);
        return;
      case 2:
        Compute(context, a, b);
        return;
      case 3:
        StoreGeneric(context, a);
        return;
      case 4:
        if (!StoreTma(context, a)) StoreGeneric(context, a);
        return;
      default: {
        Context inner = context;
        inner.trips = 2 + Pick(3);
        inner.loop = Fresh("it");
        inner.loop_has_tma_load = false;
        Open(absl::StrCat("for ", inner.loop, " = ", Index(0), " to ",
                          Index(inner.trips), " step ", Index(1), " {"));
        const int phases = 1 + Pick(3);
        for (int i = 0; i < phases; ++i) Phase(inner, depth + 1);
        Close();
        return;
      }
    }
  }

  void Wgmma(const Context& context) {
    // A (bf16 [64 * warpgroups, 16]) and B (bf16 [n, 16]) from %in, one
    // m64nNk16 product per warpgroup, each thread's accumulator fragment
    // stored to its own output row.
    const int warpgroups = context.threads / 128;
    const int n = Chance(50) ? 8 : 16;
    const std::string sa = Fresh("wa"), sb = Fresh("wb"), acc = Fresh("acc");
    allocs_.push_back(
        absl::StrCat("  ", sa, " = alloc.shared {align = 128} : shared bf16[",
                     64 * warpgroups, ", 16]"));
    allocs_.push_back(absl::StrCat(
        "  ", sb, " = alloc.shared {align = 128} : shared bf16[", n, ", 16]"));
    allocs_.push_back(
        absl::StrCat("  ", acc, " = alloc.reg : reg f32[", n / 2, "]"));
    for (const auto& [buffer, rows] :
         {std::make_pair(sa, 64 * warpgroups), std::make_pair(sb, n)}) {
      const int elements = rows * 16;
      const int per_thread = (elements + context.threads - 1) / context.threads;
      const std::string i = Fresh("i");
      Open(absl::StrCat("for ", i, " = ", Index(0), " to ", Index(per_thread),
                        " step ", Index(1), " {"));
      const std::string step = Fresh("f"), flat = Fresh("flat");
      Line(absl::StrCat(step, " = mul ", i, ", ", Index(context.threads),
                        " : index"));
      Line(absl::StrCat(flat, " = add ", step, ", ", context.tid, " : index"));
      const std::string inside = Fresh("in");
      Line(absl::StrCat(inside, " = cmp lt ", flat, ", ", Index(elements),
                        " : i1"));
      Open(absl::StrCat("if ", inside, " {"));
      const std::string r = Fresh("r"), c = Fresh("col"), gr = Fresh("gr");
      Line(absl::StrCat(r, " = div ", flat, ", ", Index(16), " : index"));
      Line(absl::StrCat(c, " = rem ", flat, ", ", Index(16), " : index"));
      Line(absl::StrCat(gr, " = rem ", r, ", ", Index(kInRows), " : index"));
      const std::string v = Fresh("v"), h = Fresh("h");
      Line(absl::StrCat(v, " = load %in[", gr, ", ", c, "] : f32"));
      Line(absl::StrCat(h, " = cast ", v, " : bf16"));
      Line(absl::StrCat("store ", buffer, "[", r, ", ", c, "], ", h));
      Close();
      Close();
    }
    const std::string wg = Fresh("wg"), wg_row = Fresh("wgrow");
    Line(
        absl::StrCat(wg, " = div ", context.tid, ", ", Index(128), " : index"));
    Line(absl::StrCat(wg_row, " = mul ", wg, ", ", Index(64), " : index"));
    Line(absl::StrCat("wgmma ", acc, "[", Index(0), "], ", sa, "[", wg_row,
                      ", ", Index(0), "], ", sb, "[", Index(0), ", ", Index(0),
                      "] {n = ", n, ", zero_init}"));
    if (Chance(50)) {
      Line(absl::StrCat("wgmma ", acc, "[", Index(0), "], ", sa, "[", wg_row,
                        ", ", Index(0), "], ", sb, "[", Index(0), ", ",
                        Index(0), "] {n = ", n, "}"));
    }
    Context rows = context;
    const std::string base = OutputRow(rows, context.threads);
    const std::string row = Fresh("gr");
    Line(absl::StrCat(row, " = add ", base, ", ", context.tid, " : index"));
    const std::string j = Fresh("j");
    Open(absl::StrCat("for ", j, " = ", Index(0), " to ", Index(n / 2),
                      " step ", Index(1), " {"));
    const std::string v = Fresh("v");
    Line(absl::StrCat(v, " = load ", acc, "[", j, "] : f32"));
    Line(absl::StrCat("store %out[", row, ", ", j, "], ", v));
    Close();
  }

  void Stmatrix(const Context& context) {
    // Each warp stores a 16x16 bf16 fragment (lane l, element e: in[(l + e)
    // % 64, warp]); every thread then reads an element of the next warp's.
    const int warps = context.threads / 32;
    const std::string m = Fresh("mx");
    allocs_.push_back(
        absl::StrCat("  ", m, " = alloc.shared {align = 128} : shared bf16[",
                     16 * warps, ", 16]"));
    const std::string lane = Fresh("lane"), warp = Fresh("warp");
    Line(absl::StrCat(lane, " = lane.id : index"));
    Line(absl::StrCat(warp, " = warp.id : index"));
    std::vector<std::string> halves;
    for (int e = 0; e < 8; ++e) {
      const std::string sum = Fresh("le"), row = Fresh("gr"), v = Fresh("v"),
                        h = Fresh("h");
      Line(absl::StrCat(sum, " = add ", lane, ", ", Index(e), " : index"));
      Line(absl::StrCat(row, " = rem ", sum, ", ", Index(kInRows), " : index"));
      Line(absl::StrCat(v, " = load %in[", row, ", ", warp, "] : f32"));
      Line(absl::StrCat(h, " = cast ", v, " : bf16"));
      halves.push_back(h);
    }
    const std::string fragment = Fresh("frag"), origin = Fresh("w16");
    Line(absl::StrCat(fragment, " = vec.from ", absl::StrJoin(halves, ", "),
                      " : vec<8xbf16>"));
    Line(absl::StrCat(origin, " = mul ", warp, ", ", Index(16), " : index"));
    Line(absl::StrCat("stmatrix ", m, "[", origin, ", ", Index(0), "], ",
                      fragment, Chance(50) ? " {trans}" : ""));
    const int elements = 16 * warps * 16;
    const std::string base = OutputRow(context, elements / 32);
    const std::string i = Fresh("i");
    Open(absl::StrCat("for ", i, " = ", Index(0), " to ",
                      Index(elements / context.threads), " step ", Index(1),
                      " {"));
    const std::string step = Fresh("f"), flat = Fresh("flat"),
                      shifted = Fresh("sh"), q = Fresh("q"), r = Fresh("r"),
                      c = Fresh("col");
    Line(absl::StrCat(step, " = mul ", i, ", ", Index(context.threads),
                      " : index"));
    Line(absl::StrCat(flat, " = add ", step, ", ", context.tid, " : index"));
    Line(absl::StrCat(shifted, " = add ", flat, ", ", Index(256), " : index"));
    Line(
        absl::StrCat(q, " = rem ", shifted, ", ", Index(elements), " : index"));
    Line(absl::StrCat(r, " = div ", q, ", ", Index(16), " : index"));
    Line(absl::StrCat(c, " = rem ", q, ", ", Index(16), " : index"));
    const std::string h = Fresh("h"), v = Fresh("v"), gr = Fresh("gr"),
                      gc = Fresh("gc"), grow = Fresh("grow");
    Line(absl::StrCat(h, " = load ", m, "[", r, ", ", c, "] : bf16"));
    Line(absl::StrCat(v, " = cast ", h, " : f32"));
    Line(absl::StrCat(gr, " = div ", flat, ", ", Index(32), " : index"));
    Line(absl::StrCat(gc, " = rem ", flat, ", ", Index(32), " : index"));
    Line(absl::StrCat(grow, " = add ", base, ", ", gr, " : index"));
    Line(absl::StrCat("store %out[", grow, ", ", gc, "], ", v));
    Close();
  }

  std::mt19937_64 rng_;
  uint64_t seed_;
  int counter_ = 0;
  int indent_ = 1;
  int rows_ = 8;
  int rows_per_block_ = 0;
  int tma_rows_per_block_ = 0;
  int barriers_ = 0;  // mbarriers, one per TMA load site
  std::set<std::string> defined_, maps_;
  std::vector<std::string> header_, allocs_, body_, params_;
  std::vector<Buffer> buffers_;
  std::vector<bool> tma_capable_;
};

std::string Generator::Generate() {
  const int threads = 32 << Pick(4);  // 32 .. 256
  const int grid = 1 + Pick(2);
  rows_ = threads == 256 || Chance(50) ? 8 : 16;
  Context block;
  block.threads = threads;
  block.tid = "%tid";
  block.issuer = "%is_t0";

  if (threads >= 64 && Chance(35)) {
    // Two roles of half the warps each, on buffers of their own.

    for (int role = 0; role < 2; ++role) {
      Context context;
      context.threads = threads / 2;
      for (int b = 0; b < 2; ++b)
        context.buffers.push_back(NewBuffer(Chance(70)));
      const int warps = threads / 64;
      Open(absl::StrCat("role @r", role, " warps[", role * warps, ", ",
                        (role + 1) * warps, ") {"));
      context.tid = Fresh("ltid");
      Line(absl::StrCat(context.tid, " = sub %tid, ", Index(role * threads / 2),
                        " : index"));
      context.issuer = Fresh("first");
      Line(absl::StrCat(context.issuer, " = cmp eq ", context.tid, ", ",
                        Index(0), " : i1"));
      LoadGeneric(context, context.buffers[0]);
      const int phases = 1 + Pick(4);
      for (int i = 0; i < phases; ++i) Phase(context, 0);
      StoreGeneric(context, context.buffers[Pick(2)]);
      Close();
    }
  } else {
    for (int b = 0; b < 2 + Pick(2); ++b)
      block.buffers.push_back(NewBuffer(Chance(70)));
    LoadGeneric(block, block.buffers[0]);
    const int phases = 2 + Pick(5);
    for (int i = 0; i < phases; ++i) {
      if (threads % 128 == 0 && Chance(12)) {
        Wgmma(block);
      } else if (Chance(10)) {
        Stmatrix(block);
      } else {
        Phase(block, 0);
      }
    }
    StoreGeneric(block,
                 block.buffers[Pick(static_cast<int>(block.buffers.size()))]);
  }

  std::vector<std::string> lines;
  lines.push_back(
      absl::StrCat("// A random kernel (kir-check --fuzz, seed ", seed_,
                   "): its outputs under the unlowered reading are"));
  lines.push_back("// what every lowering must reproduce.");
  lines.push_back(absl::StrCat("// run: @fuzz in=randint(seed=", seed_ % 1000,
                               ", low=-8, high=8) out=fill(nan) tout=fill(nan) "
                               "=> in == in"));
  std::vector<std::string> params = {
      absl::StrCat("%in: global f32[", kInRows, ", 32]"),
      absl::StrCat("%out: global f32[", grid * rows_per_block_, ", 32]"),
      absl::StrCat("%tout: global f32[",
                   grid * std::max(tma_rows_per_block_, 1), ", 32]")};
  for (const std::string& param : params_) params.push_back(param);
  lines.push_back(absl::StrCat("kernel @fuzz(",
                               absl::StrJoin(params, ",\n    "), ")\n    grid(",
                               grid, ") block(", threads, ") {"));
  for (const std::string& line : header_) lines.push_back(line);
  lines.push_back("  %tid = thread.id x : index");
  lines.push_back("  %bid = block.id x : index");
  lines.push_back(
      absl::StrCat("  %rows_per_block = const ", rows_per_block_, " : index"));
  lines.push_back("  %block_row = mul %bid, %rows_per_block : index");
  lines.push_back(absl::StrCat("  %tma_rows_per_block = const ",
                               std::max(tma_rows_per_block_, 1), " : index"));
  lines.push_back("  %tma_block_row = mul %bid, %tma_rows_per_block : index");
  lines.push_back("  %zero = const 0 : index");
  lines.push_back("  %is_t0 = cmp eq %tid, %zero : i1");
  for (const std::string& line : allocs_) lines.push_back(line);
  if (barriers_ > 0) {
    lines.push_back(
        absl::StrCat("  %bar = alloc.shared {align = 8} : shared mbarrier[",
                     barriers_, "]"));
    lines.push_back("  if %is_t0 {");
    lines.push_back(
        absl::StrCat("    %barriers = const ", barriers_, " : index"));
    lines.push_back("    %one = const 1 : index");
    lines.push_back("    for %b = %zero to %barriers step %one {");
    lines.push_back("      mbarrier.init %bar[%b] {count = 1}");
    lines.push_back("    }");
    lines.push_back("  }");
  }
  for (const std::string& line : body_) lines.push_back(line);
  lines.push_back("}");
  return absl::StrCat(absl::StrJoin(lines, "\n"), "\n");
}

}  // namespace

std::string GenerateKernel(uint64_t seed) {
  Generator generator(seed);
  return generator.Generate();
}

}  // namespace kir::check
