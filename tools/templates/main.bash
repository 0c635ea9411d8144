_gdpcli() {
    local cur line word option="" value prefix="" path=gdpcli candidates breaks="" head
    local -a words
    COMPREPLY=()
    if [[ -n ${COMP_LINE-} ]]; then  # split on blanks only, so that gdp:mu= and --format=csv stay whole
        line=${COMP_LINE:0:${COMP_POINT:-${#COMP_LINE}}}
        cur=${line##*[[:blank:]]}
        read -r -a words <<< "${line:0:${#line}-${#cur}}"
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        words=("${COMP_WORDS[@]:0:COMP_CWORD}")
    fi
    for word in "${words[@]:1}"; do
        if [[ -n $option ]]; then
            option=""
        elif [[ " $(_gdpcli_value_options "$path") " == *" $word "* ]]; then
            option=$word
        elif [[ " $(_gdpcli_subcommands "$path") " == *" $word "* ]]; then
            path="$path $word"
        fi
    done
    value=$cur
    if [[ -z $option && $cur == -*=* ]]; then
        option=${cur%%=*} value=${cur#*=} prefix=${cur%%=*}=
    fi
    if [[ -n $option ]]; then
        candidates=$(_gdpcli_option_values "$path" "$option")
    elif [[ $cur == -* ]]; then
        candidates=$(_gdpcli_options "$path")
    else
        candidates="$(_gdpcli_subcommands "$path") $(_gdpcli_argument_values "$path")"
    fi
    if [[ " $candidates " == *" @files "* ]]; then
        mapfile -t COMPREPLY < <(compgen -P "$prefix" -f -- "$value")
        compopt -o filenames 2>/dev/null
    fi
    candidates=${candidates//@files/}
    mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -P "$prefix" -W "$candidates" -- "$value")
    if [[ " ${COMPREPLY[*]} " == *"= "* ]]; then  # gdp:mu= and --option= wait for their value
        compopt -o nospace 2>/dev/null
    fi
    # bash replaces only the part of the word after its last : or = (COMP_WORDBREAKS): drop what precedes it
    [[ ${COMP_WORDBREAKS-} == *:* ]] && breaks+=:
    [[ ${COMP_WORDBREAKS-} == *=* ]] && breaks+==
    if [[ -n ${COMP_LINE-} && -n $breaks && $cur == *["$breaks"]* ]]; then
        head=${cur%"${cur##*["$breaks"]}"}
        COMPREPLY=("${COMPREPLY[@]#"$head"}")
        [[ ${#COMPREPLY[@]} == 1 && -z ${COMPREPLY[0]} ]] && COMPREPLY=()  # the word is already complete
    fi
    return 0
}

complete -F _gdpcli gdpcli
