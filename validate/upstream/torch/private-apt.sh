# shellcheck shell=sh
# Sourced by fetch.sh and fetch-viewer.sh: a private apt configuration under
# $cache/apt (Debian trixie's archive, sources and binaries), so that the machine's
# apt configuration, lists and archives are never touched.  Sets the positional
# parameters to the apt-get options that select it: apt-get "$@" ...
# shellcheck disable=SC2154 # $cache: the sourcing script sets it
apt=${cache:?private-apt.sh needs cache}/apt
mkdir -p "$apt/state/lists/partial" "$apt/cache/archives/partial" \
         "$apt/etc/sources.list.d" "$apt/etc/preferences.d" "$cache/src"
printf 'deb-src http://deb.debian.org/debian trixie main\ndeb http://deb.debian.org/debian trixie main\n' > "$apt/etc/sources.list"
set -- -o Dir::Etc::SourceList="$apt/etc/sources.list" \
       -o Dir::Etc::SourceParts="$apt/etc/sources.list.d" \
       -o Dir::Etc::Preferences="$apt/etc/preferences.d/none" \
       -o Dir::Etc::PreferencesParts="$apt/etc/preferences.d" \
       -o Dir::State="$apt/state" -o Dir::State::status=/dev/null \
       -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1 \
       -o APT::Sandbox::User="$(id -un)"
