#!/bin/bash
# Usage: bash activity.sh USERS_FILE EVENTS_FILE
#
# USERS_FILE has one user name per line. EVENTS_FILE has lines `USER ACTION` (for example
# `alice login`). For every user in USERS_FILE, in the order of that file, print one line
# `USER EVENTS LOGINS`: how many events the user has in EVENTS_FILE and how many of those are
# `login` actions. Users without events are printed with 0 0.

users="$1"
events="$2"

while read -r user; do
    total=$(grep -c "^$user " "$events")
    logins=$(grep "^$user " "$events" | grep -c " login$")
    echo "$user $total $logins"
done < "$users"
