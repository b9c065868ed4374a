# Bash completion for gpusim (installed to share/bash-completion/completions/gpusim;
# or `source scripts/gpusim-completion.bash`). It reads what it offers from the program
# itself, so it cannot fall behind: the commands from `gpusim --help`, a command's
# options from `gpusim COMMAND --help`, the values of --strategy/--strategies from
# `gpusim strategies`, of --gpu/--gpus from `gpusim gpus`, of --format, --from and
# --on-oom from their help lines; anything else completes as a file name.
# shellcheck shell=bash

_gpusim() {
  local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]}
  local cmd=${COMP_WORDS[1]:-}
  COMPREPLY=()
  if [ "$COMP_CWORD" -eq 1 ]; then
    local commands
    commands=$("$prog" --help 2>/dev/null | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
    mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
    return
  fi
  if [ "$cmd" = synth ] && [ "$COMP_CWORD" -eq 2 ]; then
    local kinds
    kinds=$("$prog" synth --help 2>/dev/null | awk '/^kinds:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
    mapfile -t COMPREPLY < <(compgen -W "$kinds" -- "$cur")
    return
  fi
  # "--name=value": bash splits at "=" when it is in COMP_WORDBREAKS (the default)
  local opt="" val=""
  if [[ $cur == --*=* ]]; then
    opt=${cur%%=*}
    val=${cur#*=}
  elif [ "$cur" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then
    opt=${COMP_WORDS[COMP_CWORD - 1]}
  elif [ "${COMP_WORDS[COMP_CWORD - 1]}" = "=" ] && [ "$COMP_CWORD" -ge 3 ]; then
    opt=${COMP_WORDS[COMP_CWORD - 2]}
    val=$cur
  fi
  local helpargs=("$cmd")
  [ "$cmd" = synth ] && [ "$COMP_CWORD" -ge 3 ] && helpargs+=("${COMP_WORDS[2]}")
  if [ -n "$opt" ]; then
    local values=""
    case $opt in
      --strategy | --strategies) values=$("$prog" strategies 2>/dev/null | awk '/^[a-z]/ { print $1 }') ;;
      --gpu | --gpus) values=$("$prog" gpus 2>/dev/null | awk 'NR > 1 && /^[A-Za-z0-9]/ { print $1 }') ;;
      *)
        # "text|json: ..." help lines: the choices before the colon
        values=$("$prog" "${helpargs[@]}" --help 2>/dev/null |
          awk -v o="$opt=..." -v ob="${opt}[=...]" '$1 == o || $1 == ob { v = $2; sub(/:.*/, "", v); if (v ~ /^[a-z0-9-]+(\|[a-z0-9-]+)+$/) { gsub(/\|/, " ", v); print v } }')
        ;;
    esac
    if [ -n "$values" ]; then
      local prefix=""
      [[ $cur == --*=* ]] && prefix=$opt=
      mapfile -t COMPREPLY < <(compgen -P "$prefix" -W "$values" -- "$val")
    else
      mapfile -t COMPREPLY < <(compgen -f -- "$val")
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    local opts
    opts=$("$prog" "${helpargs[@]}" --help 2>/dev/null | awk '/^  --[a-z0-9-]+/ { o = $1; sub(/\[=\.\.\.\]$/, "", o); sub(/=\.\.\.$/, "=", o); print o }')
    mapfile -t COMPREPLY < <(compgen -W "$opts --help" -- "$cur")
    # an option that takes a value: no space after its "="
    if [ "${#COMPREPLY[@]}" -eq 1 ] && [[ ${COMPREPLY[0]} == *= ]]; then
      compopt -o nospace 2>/dev/null || true
    fi
    return
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o default -F _gpusim gpusim
