#!/bin/sh
# independence.sh BUILD_DIR [CTEST-ARGS...]: run the built suite again on a
# hostile machine, to prove that every test builds its own world (HOME, PATH,
# config, tmux socket) and nothing of the machine leaks in.  The hostile
# machine lives in a temporary directory and is gone afterwards; the real
# HOME, /usr and /etc are never touched:
#   - "real" claude, codex and kiro-cli early on PATH, and in /usr/bin and
#     /usr/local/bin (where a system-wide npm install puts them: NodeSource's
#     npm in /usr/bin, Debian's in /usr/local/bin), there through a private
#     mount namespace of the pass's own (root; read-only overlays of the real
#     directories, which are never written); each one that runs leaves a line
#     in a log, and any line there fails the pass;
#   - HOME with a hostile ~/.tmux.conf and ~/.config/hqt/hqt.ini, and the same
#     under $XDG_CONFIG_HOME; the ~/.tmux.conf also in each test's own HOME
#     ($HQT_TEST_TMUX_CONF), where the tmux servers hqt starts read it;
#   - XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, XDG_CACHE_HOME and
#     XDG_RUNTIME_DIR at odd temporary places, CODEX_HOME too;
#   - TMUX and TMUX_PANE naming a live tmux server that runs the hostile
#     configuration (the suite run from inside tmux), TMUX_TMPDIR elsewhere;
#   - LANG=C, no LC_ALL;
#   - CI=true and GITHUB_ACTIONS=true, as a CI service sets them.
set -eu

build=${1:?usage: independence.sh BUILD_DIR [CTEST-ARGS...]}
shift
build=$(cd "$build" && pwd -P)
w=$(mktemp -d /tmp/hqt-ind-XXXXXX)
outer=$w/outer.sock
cleanup() {
	tmux -S "$outer" kill-server 2>/dev/null || true
	rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The machine's harnesses: any test that runs one has leaked the machine in.
for d in path-bin usr-bin usr-local-bin; do
	mkdir -p "$w/$d"
	for h in claude codex kiro-cli; do
		cat >"$w/$d/$h" <<EOF
#!/bin/sh
# Who ran it, up to ctest: the test binary is in that line.
p=\$PPID by=
while [ "\$p" -gt 1 ] 2>/dev/null && c=\$(cat /proc/\$p/comm 2>/dev/null); do
	by="\$by < \$c"
	[ "\$c" = ctest ] && break
	p=\$(sed 's/.*) [^ ]* \([0-9]*\).*/\1/' /proc/\$p/stat 2>/dev/null)
done
echo "\$0 \$* (run by\$by)" >>"$w/machine-harness.log"
echo "$h: the machine's own $h was run (\$0)" >&2
exit 1
EOF
		chmod 755 "$w/$d/$h"
	done
done

hostile_tmux='set -g base-index 5
setw -g pane-base-index 3
set -g remain-on-exit off
set -g default-command false
set -g default-shell /bin/false
set -s set-clipboard on
set -g prefix C-a
unbind C-b
set -g status off
set -g history-limit 10
set -g automatic-rename on
setw -g allow-rename on
set -g renumber-windows on
set -g destroy-unattached on
set -g exit-empty on
set -g mouse on
set -g mode-keys vi
set -g default-terminal screen
set -g escape-time 2000
setw -g aggressive-resize on'

hostile_ini='[hqt]
plugin_dir = /nonexistent/hqt-plugins
db = /nonexistent/hqt.db
tmux_socket = default
tmux_session = not-hqt
[plugins]
load = nothing-such
[sandbox]
enabled = true
fs = ro
net = false
ro_binds = /nonexistent-ro
rw_binds = /nonexistent-rw
env = HQT_HOSTILE
[harness.claude]
command = /bin/false'

home=$w/home
xdg=$w/xdg
mkdir -p "$home/.config/hqt" "$xdg/config/hqt" "$xdg/config/tmux" "$xdg/data" \
	"$xdg/state" "$xdg/cache" "$w/codex" "$w/tmux-tmp"
mkdir -m 700 "$xdg/run"
chmod 700 "$w/tmux-tmp"
printf '%s\n' "$hostile_tmux" >"$home/.tmux.conf"
printf '%s\n' "$hostile_tmux" >"$xdg/config/tmux/tmux.conf"
printf '%s\n' "$hostile_ini" >"$home/.config/hqt/hqt.ini"
printf '%s\n' "$hostile_ini" >"$xdg/config/hqt/hqt.ini"

export HOME="$home"
export PATH="$w/path-bin:$PATH"
export XDG_CONFIG_HOME="$xdg/config" XDG_DATA_HOME="$xdg/data" XDG_STATE_HOME="$xdg/state"
export XDG_CACHE_HOME="$xdg/cache" XDG_RUNTIME_DIR="$xdg/run"
export CODEX_HOME="$w/codex"
export TMUX_TMPDIR="$w/tmux-tmp"
export LANG=C
export CI=true GITHUB_ACTIONS=true
# Every test's own HOME gets the hostile ~/.tmux.conf too (tests/support):
# a tmux server hqt starts reads it, so hqt must set what it relies on.
export HQT_TEST_TMUX_CONF="$home/.tmux.conf"
unset LC_ALL LC_CTYPE LANGUAGE

# The user's own tmux server, with the hostile configuration; the suite
# runs "inside" it.
# (Without what would end it: no shell, no attached client.)
grep -v -e default-shell -e destroy-unattached "$home/.tmux.conf" >"$w/outer.conf"
tmux -S "$outer" -f "$w/outer.conf" new-session -d -s user 'sleep 100000'
pid=$(tmux -S "$outer" display-message -p '#{pid}')
pane=$(tmux -S "$outer" display-message -p '#{pane_id}')
export TMUX="$outer,$pid,0" TMUX_PANE="$pane"

# The same harnesses in /usr/bin and /usr/local/bin: the suite runs in a
# mount namespace of its own where an overlay of the fakes on each real
# directory (read-only, no upper layer) stands at its path; outside it,
# nothing changed.  Without root (or overlayfs) only PATH has them.
overlay='set -e
mount -t overlay hqt-independence -o "lowerdir=$1/usr-bin:/usr/bin" /usr/bin
mount -t overlay hqt-independence -o "lowerdir=$1/usr-local-bin:/usr/local/bin" /usr/local/bin
shift'
if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private sh -c "$overlay
	[ -x /usr/bin/claude ] && [ -x /usr/local/bin/claude ]" sh "$w" 2>/dev/null; then
	run() { unshare --mount --propagation private sh -c "$overlay
		exec \"\$@\"" sh "$w" "$@"; }
	echo "independence: the machine's harnesses are early on PATH and in /usr/bin" \
		"and /usr/local/bin (a private mount namespace)"
else
	echo "independence: no private mount namespace with overlayfs here (root needed):" \
		"the machine's harnesses are early on PATH only, not in /usr/bin and /usr/local/bin" >&2
	run() { "$@"; }
fi
rc=0
(cd "$build" && run ctest --output-on-failure "$@") || rc=$?
if [ -s "$w/machine-harness.log" ]; then
	echo "independence: the machine's harnesses were run:" >&2
	cat "$w/machine-harness.log" >&2
	rc=1
fi
# What the suite did to the user's server: it must still run, untouched.
tmux -S "$outer" has-session -t user 2>/dev/null ||
	{ echo "independence: the user's tmux session is gone" >&2; rc=1; }
n=$(tmux -S "$outer" list-windows -a -F x 2>/dev/null | wc -l)
[ "$n" -eq 1 ] || { echo "independence: the user's tmux server has $n windows" >&2; rc=1; }
exit $rc
