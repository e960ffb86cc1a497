#!/usr/bin/env python3
"""Generates one benchmark kernel as .kir and as upstream MLIR.

Both files hold the same program, op for op: a straight-line body of guarded
element-wise updates,

    %i7 = add %i6, %one : index            %i7 = arith.addi %i6, %one : index
    %p7 = cmp lt %i7, %N : i1              %p7 = arith.cmpi slt, %i7, %N : index
    if %p7 {                               scf.if %p7 {
      %v7 = load %x[%i7] : f32               %v7 = memref.load %x[%i7] : !m
      %w7 = mul %v7, %a : f32                %w7 = arith.mulf %v7, %a : f32
      %z7 = add %w7, %b : f32                %z7 = arith.addf %w7, %b : f32
      store %y[%i7], %z7                     memref.store %z7, %y[%i7] : !m
    }                                      }

where `!m` is an alias for memref<?xf32>. Both parsers see the same values,
nesting and op count in a similar number of bytes (MLIR's op names are
longer). The MLIR uses only func, arith, memref and scf, which mlir-opt
parses and verifies.

usage: gen.py OPS OUT_STEM   (writes OUT_STEM.kir and OUT_STEM.mlir)
"""

import sys

OPS_PER_UNIT = 7  # add, cmp, if, load, mul, add, store
PROLOGUE_OPS = 2  # the first index and the constant one


def generate(ops):
  """Returns (kir_text, mlir_text, op_count) for about `ops` operations."""
  units = max(1, (ops - PROLOGUE_OPS) // OPS_PER_UNIT)
  kir = [
      "kernel @bench sizes(%N) (%x: global f32[%N], %y: global f32[%N],"
      " %a: f32, %b: f32)\n    grid(cdiv(%N, 256)) block(256) {\n",
      "  %i0 = thread.id x : index\n",
      "  %one = const 1 : index\n",
  ]
  mlir = [
      "!m = memref<?xf32>\n"
      "func.func @bench(%x: !m, %y: !m, %a: f32, %b: f32, %N: index) {\n",
      "  %i0 = arith.constant 0 : index\n",
      "  %one = arith.constant 1 : index\n",
  ]
  for j in range(1, units + 1):
    p = j - 1
    kir.append(
        f"  %i{j} = add %i{p}, %one : index\n"
        f"  %p{j} = cmp lt %i{j}, %N : i1\n"
        f"  if %p{j} {{\n"
        f"    %v{j} = load %x[%i{j}] : f32\n"
        f"    %w{j} = mul %v{j}, %a : f32\n"
        f"    %z{j} = add %w{j}, %b : f32\n"
        f"    store %y[%i{j}], %z{j}\n"
        f"  }}\n")
    mlir.append(
        f"  %i{j} = arith.addi %i{p}, %one : index\n"
        f"  %p{j} = arith.cmpi slt, %i{j}, %N : index\n"
        f"  scf.if %p{j} {{\n"
        f"    %v{j} = memref.load %x[%i{j}] : !m\n"
        f"    %w{j} = arith.mulf %v{j}, %a : f32\n"
        f"    %z{j} = arith.addf %w{j}, %b : f32\n"
        f"    memref.store %z{j}, %y[%i{j}] : !m\n"
        f"  }}\n")
  kir.append("}\n")
  mlir.append("  return\n}\n")
  return "".join(kir), "".join(mlir), PROLOGUE_OPS + units * OPS_PER_UNIT


def main(argv):
  if len(argv) != 3:
    sys.exit(__doc__)
  kir, mlir, count = generate(int(argv[1]))
  with open(argv[2] + ".kir", "w") as f:
    f.write(kir)
  with open(argv[2] + ".mlir", "w") as f:
    f.write(mlir)
  print(f"{count} ops: {len(kir)} bytes of kir, {len(mlir)} bytes of MLIR")


if __name__ == "__main__":
  main(sys.argv)
