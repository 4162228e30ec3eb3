#!/bin/bash -eu
# Build every cargo-fuzz target of fuzz/ and install it into $OUT.
cd "$SRC/loadstar/fuzz"
cargo fuzz build -O
for target in lse gvn peeps pipeline parse; do
  cp "target/x86_64-unknown-linux-gnu/release/$target" "$OUT/"
  printf '[libfuzzer]\nmax_len = 4096\n' > "$OUT/$target.options"
done
