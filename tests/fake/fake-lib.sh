# fake-lib.sh: what every fake harness shares (sourced, not run); see README.md.
# A harness script sets FAKE_NAME and defines draw_working, draw_waiting,
# draw_idle and on_turn, then calls fake_main "$@".

fake_dir=${FAKE_DIR:-$PWD/.fake}
fake_control=${FAKE_CONTROL:-$fake_dir/control}

# Record argv (argv[0] first, NUL-separated), the environment (env -0), the
# working directory and the pid, so a test can see exactly what it received.
fake_record() {
	# Nothing is made above the record's own directory: a fake that
	# outlives its test (a pane still going when the test's root is
	# removed) must not make that root again.
	if [ -n "${FAKE_RECORD:-}" ]; then
		rec=$FAKE_RECORD
		[ -d "$(dirname "$rec")" ] || return 0
	else
		rec=${FAKE_LOG_DIR:-$fake_dir}/$FAKE_NAME.$$
		[ -d "$(dirname "$rec")" ] || mkdir "$(dirname "$rec")" 2>/dev/null || return 0
	fi
	{
		printf '%s\0' "$0" "$@" >"$rec.argv"
		env -0 >"$rec.env"
		pwd -P >"$rec.cwd"
		echo $$ >>"$(dirname "$rec")/$FAKE_NAME.pids"
	} 2>/dev/null || :
}

fake_uuid() {
	cat /proc/sys/kernel/random/uuid 2>/dev/null ||
		od -An -N16 -tx1 /dev/urandom | tr -d ' \n' |
		sed 's/^\(........\)\(....\)\(....\)\(....\)\(............\)$/\1-\2-4\3-a\4-\5/' | cut -c1-36
}

# A JSON string body: backslash and double quote escaped.
fake_json() {
	printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'
}

fake_clear() {
	printf '\033[H\033[2J'
}

# Show the screen the control file asks for; redraw only when it changes.
fake_loop() {
	state= turned=
	while :; do
		want=
		if [ -f "$fake_control" ]; then
			IFS= read -r want <"$fake_control" || :
		fi
		[ -n "$want" ] || want=${FAKE_STATE:-idle}
		if [ "$want" != "$state" ]; then
			state=$want
			case $want in
			working)
				if [ -z "$turned" ]; then turned=1; on_turn; fi
				fake_clear; draw_working ;;
			waiting) fake_clear; draw_waiting ;;
			idle) fake_clear; draw_idle ;;
			exit*)
				code=${want#exit}
				code=${code# }
				case $code in ''|*[!0-9]*) code=0 ;; esac
				echo "$FAKE_NAME: exiting with status $code"
				exit "$code" ;;
			crash*)
				msg=${want#crash}
				msg=${msg# }
				msg=${msg#\"}
				msg=${msg%\"}
				printf '%s\n' "${msg:-$FAKE_NAME crashed}" >&2
				exit 1 ;;
			event*)
				# As a hook does: the JSON on the stdin of the command
				# hqt named for the launch (the screen stays as it is).
				msg=${want#event}
				printf '%s' "${msg# }" | "${HQT_EVENT_COMMAND:-false}" ;;
			fetch*)
				# A request through whatever proxy the session has
				# (curl reads https_proxy), its outcome printed.
				url=${want#fetch}
				url=${url# }
				if curl -s --max-time 5 -o /dev/null "$url"; then
					echo "fetch: ok"
				else
					echo "fetch: failed $?"
				fi ;;
			print*)
				# printf's %b: a test can print escape sequences.
				msg=${want#print}
				printf '%b\n' "${msg# }" ;;
			*) echo "$FAKE_NAME: unknown control '$want'" ;;
			esac
		fi
		sleep 0.1
	done
}
