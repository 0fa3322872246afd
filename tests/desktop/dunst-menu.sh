#!/bin/sh
# dunst's context menu program (its `dmenu` setting) in the desktop end-to-end run: it plays the
# user who picks one action in the menu that `dunstctl context` opens. dunst writes one line per
# action, "#<label> (<summary>) [<notification id>,<action key>]", and invokes the action of the
# line printed back (then emits ActionInvoked on the bus, as for a click on a button).
#
#   dunst-menu.sh CHOICE_FILE
#
# CHOICE_FILE holds the action key to pick (e.g. "approve"); it is removed once read, so a menu
# opened without a choice picks nothing. Every menu dunst offered is appended to CHOICE_FILE.log.
choice_file=$1
menu=$(cat)
printf '%s\n--\n' "$menu" >>"$choice_file.log"
[ -f "$choice_file" ] || exit 0
key=$(cat "$choice_file")
rm -f "$choice_file"
printf '%s\n' "$menu" | grep -m1 -F ",$key]"
exit 0
