#!/bin/sh
# Install the Debian packages the reader needs on this machine, when missing (`make install` runs
# this): Tesseract, its English and French data and its orientation data (osd) read scanned PDF pages (docs/documents.md, "Scanned
# pages"); qpdf strips the bookmarks of the filings the heading benchmarks read. With --bench
# (`make install-bench`), also a Java runtime for opendataloader-pdf's CLI, which the PDF engine
# benchmark runs beside the reader (benchmarks/pdf_engines.py). Needs root (or sudo) and apt-get;
# prints what to install and exits 1 otherwise.
set -u
PACKAGES="tesseract-ocr tesseract-ocr-eng tesseract-ocr-osd tesseract-ocr-fra qpdf"
BENCH=0
if [ "${1:-}" = "--bench" ]; then BENCH=1; PACKAGES="$PACKAGES openjdk-17-jre-headless"; fi
have_all() {
    command -v qpdf >/dev/null 2>&1 && command -v tesseract >/dev/null 2>&1 && tesseract --list-langs 2>/dev/null | grep -qx eng \
        && tesseract --list-langs 2>/dev/null | grep -qx osd && tesseract --list-langs 2>/dev/null | grep -qx fra \
        && { [ "$BENCH" = 0 ] || command -v java >/dev/null 2>&1; }
}
if have_all; then
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "system packages missing and not root: apt-get install $PACKAGES" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "system packages missing and no apt-get on this machine: install $PACKAGES" >&2
    exit 1
fi
# shellcheck disable=SC2086
$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $PACKAGES >/dev/null \
    || { echo "apt-get install $PACKAGES failed" >&2; exit 1; }
have_all || { echo "apt-get installed $PACKAGES, yet one is still missing (qpdf, tesseract with eng, fra and osd, java)" >&2; exit 1; }
