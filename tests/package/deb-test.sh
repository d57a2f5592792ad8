#!/bin/sh
# deb-test.sh: build the .deb with cpack, unpack it into a temporary root, and
# check what a user of the package gets: every file in place, `hqt doctor`
# working from the package's own layout, and the example plugin building
# against the packaged header with `pkg-config hqt-plugin` alone.
# HQT_TEST_INSTALL=1 also installs it for real with dpkg -i (and removes it).
set -eu

src=${HQT_SOURCE_DIR:?run through ctest}
work=$(mktemp -d /tmp/hqt-deb-XXXXXX)
trap 'rm -rf "$work"' EXIT
# What the tools leave in a temporary directory goes with ours (lintian
# left an mldbm-elf-* file in /tmp at every run).
mkdir "$work/tmp"
TMPDIR=$work/tmp
export TMPDIR
fail() { echo "deb-test: $*" >&2; exit 1; }
# The system's PATH for the build tools; hqt itself runs with tools_path
# (below), which holds no harness: doctor runs each harness it finds with
# --version, and the machine's (early on a user's PATH, or in /usr/bin where
# a system-wide npm puts it) is not this test's to run.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
DISABLE_AUTOUPDATER=1
export PATH DISABLE_AUTOUPDATER
# Without lintian (./bootstrap test installs it; ./bootstrap run does not)
# the package cannot be checked: skipped, with why (ctest SKIP_RETURN_CODE).
if ! command -v lintian >/dev/null 2>&1; then
	echo "deb-test: SKIPPED: lintian is not installed (apt-get install lintian; ./bootstrap test installs it)"
	exit 77
fi

cmake -S "$src" -B "$work/build" -DCMAKE_INSTALL_PREFIX=/usr -DHQT_TESTS=OFF >/dev/null
cmake --build "$work/build" -j 2 >/dev/null
(cd "$work/build" && cpack -G DEB >/dev/null) || fail "cpack failed"
deb=$(ls "$work"/build/hqt_*.deb)
dpkg-deb -f "$deb" Depends | grep -q tmux || fail "package does not depend on tmux"
# lintian: no errors (warnings are printed, and allowed).
lint=$(lintian --fail-on error "$deb" 2>&1) || fail "lintian: $lint"
lint=$(echo "$lint" | grep -v 'running with root privileges' || true)
[ -z "$lint" ] || echo "$lint"
dpkg-deb -I "$deb" conffiles | grep -qx /etc/hqt/hqt.ini || fail "/etc/hqt/hqt.ini is not a conffile"
dpkg -x "$deb" "$work/root"
tools_path=$work/tools
mkdir "$tools_path"
for t in tmux bwrap git env; do
	if p=$(command -v "$t"); then ln -s "$p" "$tools_path/$t"; fi
done
with_tools() { PATH=$tools_path "$@"; }

root=$work/root
multiarch=$(ls -d "$root"/usr/lib/*/hqt | head -1)
[ -n "$multiarch" ] || fail "no plugin directory in the package"
for f in usr/bin/hqt etc/hqt/hqt.ini usr/include/hqt/plugin.h \
	 usr/share/man/man1/hqt.1.gz usr/share/man/man5/hqt.ini.5.gz \
	 usr/share/bash-completion/completions/hqt; do
	[ -f "$root/$f" ] || fail "missing /$f"
done
for p in claude codex kiro generic; do
	[ -f "$multiarch/plugins/$p.so" ] || fail "missing plugin $p.so"
done
pc=$(ls "$root"/usr/lib/*/pkgconfig/hqt-plugin.pc)

# The packaged binary finds its packaged plugins (relative to itself).
# A user of its own: nothing of the machine's (its config, database, tmux).
export HOME="$work/home"
export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share"
export XDG_STATE_HOME="$HOME/.local/state" XDG_CACHE_HOME="$HOME/.cache"
unset HQT_CONFIG HQT_DB HQT_PLUGIN_DIR TMUX TMUX_PANE XDG_RUNTIME_DIR
mkdir -p "$HOME"
out=$(with_tools "$root/usr/bin/hqt" --config "$root/etc/hqt/hqt.ini" --db "$work/home/hqt.db" plugins)
for p in claude codex kiro generic; do
	echo "$out" | grep -q "^loaded   $p " || fail "packaged hqt did not load $p: $out"
done
with_tools "$root/usr/bin/hqt" --config "$root/etc/hqt/hqt.ini" --db "$work/home/hqt.db" doctor >/dev/null ||
	fail "doctor failed from the package"

# An out-of-tree plugin with pkg-config alone, against the packaged header.
cp -r "$src/examples/hello-plugin" "$work/hello"
PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$(dirname "$pc") make -s -C "$work/hello" ||
	fail "example plugin did not build against the package"
mkdir -m 755 "$work/plugins"
cp "$work/hello/hello.so" "$work/plugins/"
out=$(with_tools "$root/usr/bin/hqt" --plugin-dir "$work/plugins" --db "$work/home/hqt.db" plugins 2>&1)
echo "$out" | grep -q "^loaded   hello " || fail "packaged hqt did not load the example plugin: $out"

# `cmake --install --prefix DIR` of the tested build (configured for the
# default prefix): everything lands under DIR, nothing in /usr/local or /etc;
# the installed hqt reads DIR/etc/hqt/hqt.ini and loads DIR's plugins; the
# manifest removes it all.
build=${HQT_BUILD_DIR:?run through ctest}
prefix=$work/prefix
listing() { find /usr/local /etc -xdev 2>/dev/null | LC_ALL=C sort; }
listing >"$work/before"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
	fail "cmake --install --prefix failed: $(cat "$work/install.log")"
listing >"$work/after"
diff "$work/before" "$work/after" >"$work/outside" ||
	fail "the install wrote outside $prefix: $(cat "$work/outside")"
manifest=$build/install_manifest.txt
while read -r f; do
	case $f in "$prefix"/*) ;; *) fail "installed outside the prefix: $f" ;; esac
	[ -f "$f" ] || fail "manifest names a missing file: $f"
done <"$manifest"
for f in bin/hqt etc/hqt/hqt.ini include/hqt/plugin.h share/man/man1/hqt.1.gz \
	 share/doc/hqt/copyright; do
	[ -f "$prefix/$f" ] || fail "missing $prefix/$f"
done
grep -qx "prefix=$prefix" "$(dirname "$(find "$prefix" -name hqt-plugin.pc)")/hqt-plugin.pc" ||
	fail "hqt-plugin.pc does not name the prefix"
out=$(with_tools "$prefix/bin/hqt" --db "$work/home/hqt.db" doctor 2>&1) || fail "doctor failed from $prefix: $out"
echo "$out" | grep -q "config .*using $prefix/etc/hqt/hqt.ini" ||
	fail "the installed hqt does not read $prefix/etc/hqt/hqt.ini: $out"
out=$(with_tools "$prefix/bin/hqt" --db "$work/home/hqt.db" plugins 2>&1)
for p in claude codex kiro generic; do
	echo "$out" | grep -q "^loaded   $p .*$prefix/" || fail "installed hqt did not load $p: $out"
done
xargs rm <"$manifest"
left=$(find "$prefix" -type f)
[ -z "$left" ] || fail "xargs rm < install_manifest.txt left: $left"

if [ "${HQT_TEST_INSTALL:-}" = 1 ]; then
	dpkg -i "$deb" >/dev/null
	with_tools /usr/bin/hqt doctor >/dev/null || { dpkg -r hqt >/dev/null; fail "installed hqt doctor failed"; }
	dpkg -r hqt >/dev/null
fi
echo "deb-test: ok ($(basename "$deb"))"
