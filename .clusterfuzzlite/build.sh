#!/bin/bash -eu
# Build every cargo-fuzz target of fuzz/ into $OUT, with
#  - its seed corpus, $OUT/TARGET_seed_corpus.zip: the text corpus
#    (corpus/**/*.ir) encoded as the target's input plus generator seeds, written
#    by the target binary itself (LOADSTAR_WRITE_SEEDS, verify::seeds);
#  - libz3 in $OUT/lib (the runner image has none), found through the rpath;
#  - the `parse` target's dictionary.
# base-builder-rust sets RUSTUP_TOOLCHAIN to its own nightly, which wins over
# fuzz/rust-toolchain.toml; the sanitizer flags come from the environment.
cd "$SRC/loadstar/fuzz"
cargo fuzz build -O --debug-assertions
targets=(lse gvn peeps pipeline native smt parse)
mkdir -p "$OUT/lib"
cp "$(pkg-config --variable=libdir z3)"/libz3.so* "$OUT/lib/"
for target in "${targets[@]}"; do
  bin="$OUT/$target"
  cp "target/x86_64-unknown-linux-gnu/release/$target" "$bin"
  patchelf --set-rpath '$ORIGIN/lib' "$bin"
  seeds="$WORK/seeds/$target"
  rm -rf "$seeds"
  mkdir -p "$seeds"
  LOADSTAR_WRITE_SEEDS="$seeds" LOADSTAR_CORPUS="$SRC/loadstar/corpus" "$bin"
  rm -f "$OUT/${target}_seed_corpus.zip"
  (cd "$seeds" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
done
cp parse.dict "$OUT/parse.dict"
printf '[libfuzzer]\ndict = parse.dict\n' > "$OUT/parse.options"
