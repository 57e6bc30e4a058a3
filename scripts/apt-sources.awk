# Read one APT sources file and print its enabled entries, one line per
# type, URI and suite:
#   TYPE URI SUITE COMPONENTS(comma-separated, '-' if none) SIGNED-BY('-' if none)
# Run with -v format=oneline (sources.list(5)'s one-line style) or
# -v format=deb822 (its deb822 style). Disabled entries (deb822's
# 'Enabled: no'), comments and unknown types are skipped. An inline key in
# Signed-By prints as '-': the entry needs the archive keyring then.

function emit(types, uris, suites, comps, key,    t, u, s, nt, nu, ns, T, U, S) {
	nt = split(types, T, " ")
	nu = split(uris, U, " ")
	ns = split(suites, S, " ")
	gsub(/[ \t]+/, ",", comps)
	sub(/^,/, "", comps)
	sub(/,$/, "", comps)
	if (comps == "")
		comps = "-"
	if (key == "" || key ~ /BEGIN PGP/)
		key = "-"
	for (t = 1; t <= nt; t++) {
		if (T[t] != "deb" && T[t] != "deb-src")
			continue
		for (u = 1; u <= nu; u++)
			for (s = 1; s <= ns; s++)
				print T[t], U[u], S[s], comps, key
	}
}

function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

# deb822: a stanza's fields, with continuation lines folded in.
function flush(    enabled) {
	enabled = tolower(field["enabled"])
	if (field["types"] != "" && enabled != "no" && enabled != "false")
		emit(field["types"], field["uris"], field["suites"], field["components"], field["signed-by"])
	delete field
	last = ""
}

format == "oneline" {
	line = $0
	sub(/#.*/, "", line)
	line = trim(line)
	if (line == "")
		next
	key = ""
	# Options: '[opt=val opt2=val2]' right after the type.
	if (match(line, /\[[^]]*\]/)) {
		opts = substr(line, RSTART + 1, RLENGTH - 2)
		line = substr(line, 1, RSTART - 1) " " substr(line, RSTART + RLENGTH)
		n = split(opts, O, " ")
		for (i = 1; i <= n; i++)
			if (tolower(O[i]) ~ /^signed-by=/)
				key = substr(O[i], 11)
	}
	n = split(line, W, " ")
	if (n < 3)
		next
	comps = ""
	for (i = 4; i <= n; i++)
		comps = comps " " W[i]
	emit(W[1], W[2], W[3], comps, key)
	next
}

format == "deb822" && /^#/ { next }
format == "deb822" && /^[ \t]*$/ { flush(); next }
format == "deb822" && /^[ \t]/ {
	# A continuation line: folded into the field before it.
	if (last != "" && $0 !~ /^[ \t]+\.$/)
		field[last] = field[last] " " trim($0)
	next
}
format == "deb822" {
	i = index($0, ":")
	if (i == 0)
		next
	last = tolower(trim(substr($0, 1, i - 1)))
	field[last] = trim(substr($0, i + 1))
	next
}
END {
	if (format == "deb822")
		flush()
}
