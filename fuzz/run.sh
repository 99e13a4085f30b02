#!/usr/bin/env bash
# Builds the fuzz targets (AFL++ through the `afl` crate, stable toolchain) and runs each in turn,
# one fuzzer process at a time at the lowest priority (or --jobs of them), then reports per target:
# executions, coverage (edges found and bitmap coverage), corpus size, crashes and hangs.
#
#   fuzz/run.sh [--time SECONDS] [--long] [--jobs N] [--no-build] [TARGET...]
#
#   --time SECONDS  how long each target runs (default 60)
#   --long          run each target until 10 million executions (the Reliability target; hours
#                   per target on a small machine); --time then caps it
#   --jobs N        N fuzzer processes per target, one per core you can spare: the main one
#                   (AFL++'s -M, queue fuzz/out/<target>/default) and N-1 secondaries (-S jobK)
#                   that share its finds; executions are the sum of all, and in --long mode each
#                   runs its share of the 10 million. Default 1.
#   --no-build      use the targets already built
#   TARGET          wire_review gateway_body cel policy_loader lint snapshot replay suite
#                   (default: all)
#
# Needs cargo-afl once: `cargo install cargo-afl` (it builds AFL++ for the toolchain on first use;
# `cargo afl config --build` does it explicitly). Runs resume: fuzz/out/<target>/ keeps each queue.
#
# Seeds, assembled into fuzz/out/seeds/<target>/ at every run: the inputs kept in
# testdata/fuzz/<target>/ (minimised finds and past crashes, replayed by `cargo test`), and the
# repository's own inputs of that kind (testdata/ reviews, policies, snapshots, audit logs,
# suites, CEL parity cases), plus the AdmissionReviews captured from a real kube-apiserver in
# ../shared/fixtures/admission-reviews when it is there (read, never copied into the repository).
#
# A crash or hang: reproduce it with `fuzz/target/release/<target> < FILE`, fix it, and keep the
# input in testdata/fuzz/<target>/ (see testdata/fuzz/README.md). The exit status is 1 when
# anything crashed or hung.
#
# cel.dict's function names come from the checker's declarations:
#   grep -oE '[a-zA-Z][a-zA-Z0-9_]*(\.[a-zA-Z][a-zA-Z0-9_]*)*\(' policies-cel/src/cel/check/decls.rs
set -euo pipefail

ALL_TARGETS=(wire_review gateway_body cel policy_loader lint snapshot replay suite)
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out="$here/out"

seconds=60
long=0
jobs=1
build=1
targets=()
while (($#)); do
  case "$1" in
    --time) seconds="${2:?--time needs a number of seconds}"; shift 2 ;;
    --time=*) seconds="${1#--time=}"; shift ;;
    --long) long=1; shift ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift 2 ;;
    --jobs=*) jobs="${1#--jobs=}"; shift ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,33p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${ALL_TARGETS[@]}")
for target in "${targets[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $target "* ]] || { echo "unknown target $target (one of: ${ALL_TARGETS[*]})" >&2; exit 2; }
done
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "--time takes whole seconds" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "--jobs takes a whole number from 1" >&2; exit 2; }
if ((long)) && [[ "$seconds" == 60 ]]; then seconds=0; fi # --long alone: no time cap

command -v cargo-afl >/dev/null || { echo "cargo-afl is not installed: cargo install cargo-afl" >&2; exit 2; }

if ((build)); then
  echo "building the targets (cargo afl build --release)..."
  (cd "$here" && nice -n 19 cargo afl build --release --quiet)
fi

# AFL++'s own dictionaries, from the AFL++ that cargo-afl built.
afl_dicts="$(ls -d "${XDG_DATA_HOME:-$HOME/.local/share}"/afl.rs/*/afl.rs-*/afl/share/afl/dictionaries 2>/dev/null | tail -1 || true)"

# Copies the files matching the find arguments into dir, each under a name unique to its path.
seed() {
  local dir="$1"; shift
  local file
  while IFS= read -r -d '' file; do
    local name="${file#"$repo"/}"
    name="${name#../}"
    cp "$file" "$dir/$(echo "$name" | tr '/' '_')"
  done < <(find "$@" -type f -size -64k -print0 2>/dev/null)
}

seeds() {
  local target="$1" dir="$out/seeds/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  [[ -d "$repo/testdata/fuzz/$target" ]] && seed "$dir" "$repo/testdata/fuzz/$target" ! -name README.md
  local shared="$repo/../shared/fixtures/admission-reviews"
  case "$target" in
    wire_review|gateway_body)
      seed "$dir" "$repo/testdata/reviews" -name '*.json'
      [[ -d "$shared" ]] && seed "$dir" "$shared" -name '*.json' ;;
    cel)
      # One expression per seed (from the parity cases and the pack), some with roots after a NUL.
      local n=0 expr
      while IFS= read -r expr; do
        printf '%s' "$expr" > "$dir/expr-$((n++))"
      done < <(grep -hE '^\s*(- )?(expr|expression|messageExpression|valueExpression): ' \
                 "$repo"/testdata/cel-parity/*.yaml "$repo"/policies-cel/pack/*.yaml \
               | sed -E 's/^\s*(- )?[a-zA-Z]+: //; s/^"(.*)"$/\1/; s/^'"'"'(.*)'"'"'$/\1/' | head -400)
      printf 'object.spec.replicas > oldObject.spec.replicas && request.userInfo.username.startsWith("system:")\0{"object":{"spec":{"replicas":3}},"oldObject":{"spec":{"replicas":5}},"request":{"userInfo":{"username":"system:serviceaccount:db:op"}}}' > "$dir/roots-0"
      printf 'params.data.?limit.orValue("1").size() <= 3 && namespaceObject.metadata.labels.all(k, k.startsWith("a"))\0{"params":{"data":{"limit":"10"}},"namespaceObject":{"metadata":{"labels":{"ab":"x"}}}}' > "$dir/roots-1"
      printf 'impact.summary.podsDisrupted > 0 || cluster.list("v1/Pod", "db").size() > 2' > "$dir/impact-0" ;;
    policy_loader|lint)
      seed "$dir" "$repo/testdata/policies" "$repo/testdata/lint" "$repo/policies-cel/pack" "$repo/testdata/suites/replicas-limit" \
        \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) ! -name '*.test.yaml' ;;
    snapshot)
      seed "$dir" "$repo/testdata/clusters" \( -name '*.yaml' -o -name '*.json' \) ;;
    replay)
      # Two events per seed: a whole log is too big a seed to mutate well.
      local log
      for log in "$repo"/testdata/audit/*.jsonl; do
        head -n 40 "$log" | split -l 2 - "$dir/$(basename "$log" .audit.jsonl)-"
      done ;;
    suite)
      seed "$dir" "$repo/testdata/suites" -name '*.test.yaml' ;;
  esac
  ls "$dir" | wc -l
}

dicts() {
  case "$1" in
    cel) echo "-x $here/dict/cel.dict" ;;
    policy_loader|lint|snapshot|suite)
      echo "-x $here/dict/k8s.dict${afl_dicts:+ -x $afl_dicts/yaml.dict}" ;;
    *) echo "-x $here/dict/k8s.dict${afl_dicts:+ -x $afl_dicts/json.dict}" ;;
  esac
}

# One value of a fuzzer_stats file.
stat() { awk -F' *: *' -v key="$2" '$1 == key { print $2 }' "$1" 2>/dev/null || true; }

# The instances of a target, by their directory under fuzz/out/<target>: the main one, then the
# secondaries of --jobs.
instances() {
  echo default
  local k
  for ((k = 2; k <= jobs; k++)); do echo "job$k"; done
}

# The last speed of every instance of target $1, summed (executions a second).
execs_per_sec() {
  cat "$out/$1"/*/fuzzer_stats 2>/dev/null | awk -F' *: *' '$1 == "execs_per_sec" { s += $2 } END { printf "%.2f", s }'
}

# Executions so far of every instance of target $1 (this run's and earlier runs' ones).
execs_all() {
  local total=0 file
  for file in "$out/$1"/*/fuzzer_stats; do
    [[ -f "$file" ]] && total=$((total + $(stat "$file" execs_done)))
  done
  echo "$total"
}

# One afl-fuzz process of $target ($binary), as $role (none, -M or -S), within $limits, logging
# to $log. RUST_LIB_BACKTRACE=0: an error refusing an input would otherwise capture (and, printed,
# symbolise) a backtrace whenever RUST_BACKTRACE is set, which took 80% of a refused suite's time.
# shellcheck disable=SC2046 # the dictionaries are several words
fuzz() {
  RUST_LIB_BACKTRACE=0 AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_AUTORESUME=1 AFL_FAST_CAL=1 \
  AFL_IGNORE_SEED_PROBLEMS=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
    nice -n 19 cargo afl fuzz -i "$out/seeds/$target" -o "$out/$target" -t 2000 -m 4096 \
      "${role[@]}" $(dicts "$target") "${limits[@]}" -- "$binary" > "$log" 2>&1
}

# Sets role, limits and log for the instance named $1 of $target.
instance() {
  local own
  own="$(stat "$out/$target/$1/fuzzer_stats" execs_done)"
  limits=()
  ((seconds > 0)) && limits+=(-V "$seconds")
  ((long)) && limits+=(-E $((${own:-0} + 10000000 / jobs)))
  role=()
  log="$out/$target.log"
  if ((jobs > 1)); then
    if [[ "$1" == default ]]; then role=(-M default); else role=(-S "$1"); log="$out/$target.$1.log"; fi
  fi
}

mkdir -p "$out"
report=()
failed=0
for target in "${targets[@]}"; do
  binary="$here/target/release/$target"
  [[ -x "$binary" ]] || { echo "$binary is missing: run without --no-build" >&2; exit 2; }
  count="$(seeds "$target")"
  stats="$out/$target/default/fuzzer_stats"
  before="$(execs_all "$target")"
  echo "== $target: $count seeds, $jobs process(es)"
  touch "$out/$target.start"
  secondaries=()
  for name in $(instances | tail -n +2); do
    instance "$name"
    echo "   $name: ${limits[*]:-no limit} (log: $log)"
    fuzz & secondaries+=($!)
  done
  instance default
  echo "   default: ${limits[*]:-no limit} (log: $log)"
  status=0
  fuzz || status=$?
  # The main process has stopped (its limit, or an interrupt): stop the secondaries with it.
  for name in $(instances | tail -n +2); do
    pkill -INT -f "afl-fuzz .*-o $out/$target .*-S $name " 2>/dev/null || true
  done
  for pid in "${secondaries[@]}"; do wait "$pid" || true; done
  if ((status != 0)); then
    echo "afl-fuzz failed for $target; the end of its log:" >&2
    tail -n 20 "$log" >&2
    failed=1
    continue
  fi
  after="$(execs_all "$target")"
  # Found in this run: a fixed input moved out of crashes/ (to fixed/, say) is not counted again.
  crashes="$(find "$out/$target"/*/crashes -name 'id:*' -newer "$out/$target.start" 2>/dev/null | wc -l)"
  hangs="$(find "$out/$target"/*/hangs -name 'id:*' -newer "$out/$target.start" 2>/dev/null | wc -l)"
  ((crashes + hangs > 0)) && failed=1
  row="$(printf '%-14s %12s %12s %9s %12s %8s %7s %6s' "$target" "$((after - before))" "$after" \
    "$(execs_per_sec "$target")" "$(stat "$stats" edges_found)/$(stat "$stats" total_edges)" \
    "$(stat "$stats" bitmap_cvg)" "$crashes" "$hangs")"
  report+=("$row")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$((after - before))" "$after" \
    "$(stat "$stats" edges_found)" "$crashes" "$hangs" >> "$out/history.tsv"
  find "$out/$target"/*/crashes "$out/$target"/*/hangs -name 'id:*' -newer "$out/$target.start" \
    -printf '   found: %p\n' 2>/dev/null || true
done

echo
printf '%-14s %12s %12s %9s %12s %8s %7s %6s\n' target "execs (run)" "execs (all)" "execs/s" edges bitmap crashes hangs
printf '%s\n' "${report[@]}"
echo "(crashes and hangs: found in this run; AFL keeps them in fuzz/out/<target>/default/{crashes,hangs})"
exit "$failed"
