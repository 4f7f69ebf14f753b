# bash completion for tracebook                                -*- shell-script -*-
# SPDX-License-Identifier: MIT
# Written by tools/cligen (`ninja -C build cli-docs`) from engine/cli/commands.c: edit that, not this.
# Install as $(pkg-config --variable=completionsdir bash-completion)/tracebook,
# or source it from ~/.bashrc.

# The built-in report names (from `tracebook reports`), each prefixed by $2.
_tracebook_builtins()
{
    local id rest
    "$1" reports 2>/dev/null | while read -r id rest; do printf '%s%s\n' "$2" "$id"; done
}

_tracebook()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} tb=${COMP_WORDS[0]}
    local cmd opts
    COMPREPLY=()
    # "--name=VALUE": bash splits the word at '='
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    fi
    # "builtin:NAME": bash splits the word at ':'
    if [[ $cur == : && $prev == builtin ]]; then
        COMPREPLY=($(_tracebook_builtins "$tb"))
        return
    fi
    if [[ $prev == : && ${COMP_WORDS[COMP_CWORD-2]} == builtin ]]; then
        COMPREPLY=($(compgen -W "$(_tracebook_builtins "$tb")" -- "$cur"))
        return
    fi
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "export merge report query print compare history reports info help -h --help -V --version" -- "$cur"))
        return
    fi
    cmd=${COMP_WORDS[1]}
    if [[ $cmd == export ]]; then
        if ((COMP_CWORD == 2)); then
            COMPREPLY=($(compgen -W "db timeline summary" -- "$cur"))
            return
        fi
        cmd="$cmd ${COMP_WORDS[2]}"
    fi
    if [[ $cmd == print ]]; then
        if ((COMP_CWORD == 2)); then
            COMPREPLY=($(compgen -W "summary trace" -- "$cur"))
            return
        fi
        cmd="$cmd ${COMP_WORDS[2]}"
    fi
    if [[ $cmd == history ]]; then
        if ((COMP_CWORD == 2)); then
            COMPREPLY=($(compgen -W "add report list remove" -- "$cur"))
            return
        fi
        cmd="$cmd ${COMP_WORDS[2]}"
    fi
    case $cmd in
    "export db")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --shard|-shard)
            return
            ;;
        esac
        opts="-dir --dir -o --output --shard --keep-going --strict --keep-python-functions --pytorch-links --fail-on-warning --timing -q --quiet -h --help"
        ;;
    "export timeline")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --spec|-spec|-reports)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$(_tracebook_builtins "$tb" builtin:)" -- "$cur"))
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        --slice-mb|-slice-mb)
            return
            ;;
        --slice-config|-slice-config)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        esac
        opts="-dir --dir -o --output -reports --spec --model-id --iteration-id --iteration-count --slice-mb --slice-config --clear --rebuild --strict --keep-going -q --quiet -h --help"
        ;;
    "export summary")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --spec|-spec|-reports)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$(_tracebook_builtins "$tb" builtin:)" -- "$cur"))
            return
            ;;
        --format|-format|--summary-format)
            COMPREPLY=($(compgen -W "csv json xlsx" -- "$cur"))
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        --max-cpu-time|-max-cpu-time)
            return
            ;;
        --max-memory|-max-memory)
            return
            ;;
        --max-temp|-max-temp)
            return
            ;;
        esac
        opts="-dir --dir -o --output -reports --spec --summary-format --format --csv-safe --model-id --iteration-id --iteration-count --max-cpu-time --max-memory --max-temp --no-clobber --merge --clear --rebuild --strict --keep-going -q --quiet -h --help"
        ;;
    "merge")
        case $prev in
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        esac
        opts="-o --output --keep-going -q --quiet -h --help"
        if [[ $cur != -* ]]; then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
        fi
        ;;
    "report")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --spec|-spec)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$(_tracebook_builtins "$tb" builtin:)" -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --format|-format)
            COMPREPLY=($(compgen -W "csv json console xlsx html" -- "$cur"))
            return
            ;;
        --timeunit|-timeunit)
            COMPREPLY=($(compgen -W "ns us ms s" -- "$cur"))
            return
            ;;
        --param|-param)
            return
            ;;
        --report|-report)
            return
            ;;
        --width|-width)
            return
            ;;
        --base|-base)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        --max-steps|-max-steps)
            return
            ;;
        --max-cpu-time|-max-cpu-time)
            return
            ;;
        --max-memory|-max-memory)
            return
            ;;
        --max-temp|-max-temp)
            return
            ;;
        --fail-on-finding|-fail-on-finding)
            COMPREPLY=($(compgen -W "info warning critical" -- "$cur"))
            return
            ;;
        esac
        opts="-dir --dir --spec -o --output --format --csv-safe --keep-db --timeunit --param --report --width --base --model-id --iteration-id --iteration-count --max-steps --max-cpu-time --max-memory --max-temp --rebuild --strict --keep-going --fail-on-warning --fail-on-finding -q --quiet -h --help"
        ;;
    "query")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --format|-format)
            COMPREPLY=($(compgen -W "console csv json" -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --timeunit|-timeunit)
            COMPREPLY=($(compgen -W "ns us ms s" -- "$cur"))
            return
            ;;
        --param|-param)
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        --max-steps|-max-steps)
            return
            ;;
        --max-cpu-time|-max-cpu-time)
            return
            ;;
        --max-memory|-max-memory)
            return
            ;;
        --max-temp|-max-temp)
            return
            ;;
        --max-rows|-max-rows)
            return
            ;;
        --width|-width)
            return
            ;;
        esac
        opts="-dir --dir --format -o --output --csv-safe --timeunit --param --model-id --iteration-id --iteration-count --max-steps --max-cpu-time --max-memory --max-temp --max-rows --width --rebuild --strict -q --quiet -h --help"
        ;;
    "print summary")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --log-file|-log-file)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --width|-width)
            return
            ;;
        --timeunit|-timeunit)
            COMPREPLY=($(compgen -W "ns us ms s" -- "$cur"))
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        esac
        opts="-dir --dir --per-device --log-file --width --timeunit --model-id --iteration-id --iteration-count --rebuild --strict -q --quiet -h --help"
        ;;
    "print trace")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --log-file|-log-file)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --width|-width)
            return
            ;;
        --timeunit|-timeunit)
            COMPREPLY=($(compgen -W "ns us ms s" -- "$cur"))
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        esac
        opts="-dir --dir --per-device --log-file --width --timeunit --model-id --iteration-id --iteration-count --rebuild --strict -q --quiet -h --help"
        ;;
    "compare")
        case $prev in
        --base|-base)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --new|-new)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --spec|-spec)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$(_tracebook_builtins "$tb" builtin:)" -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --format|-format)
            COMPREPLY=($(compgen -W "csv json xlsx html" -- "$cur"))
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        --base-iteration-id|-base-iteration-id)
            return
            ;;
        --new-iteration-id|-new-iteration-id)
            return
            ;;
        --timeunit|-timeunit)
            COMPREPLY=($(compgen -W "ns us ms s" -- "$cur"))
            return
            ;;
        --max-steps|-max-steps)
            return
            ;;
        --max-cpu-time|-max-cpu-time)
            return
            ;;
        --max-memory|-max-memory)
            return
            ;;
        --max-temp|-max-temp)
            return
            ;;
        esac
        opts="--base --new --spec -o --output --format --csv-safe --fail-on-regression --model-id --iteration-id --iteration-count --base-iteration-id --new-iteration-id --timeunit --max-steps --max-cpu-time --max-memory --max-temp --rebuild --strict --keep-going -q --quiet -h --help"
        ;;
    "history add")
        case $prev in
        --history|-history)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --spec|-spec)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$(_tracebook_builtins "$tb" builtin:)" -- "$cur"))
            return
            ;;
        --label|-label)
            return
            ;;
        --meta|-meta)
            return
            ;;
        --keep|-keep)
            return
            ;;
        --param|-param)
            return
            ;;
        --model-id|-model-id)
            return
            ;;
        --iteration-id|-iteration-id)
            return
            ;;
        --iteration-count|-iteration-count)
            return
            ;;
        --max-steps|-max-steps)
            return
            ;;
        --max-cpu-time|-max-cpu-time)
            return
            ;;
        --max-memory|-max-memory)
            return
            ;;
        --max-temp|-max-temp)
            return
            ;;
        esac
        opts="--history -dir --dir --spec --label --meta --keep --param --model-id --iteration-id --iteration-count --max-steps --max-cpu-time --max-memory --max-temp --rebuild --strict -q --quiet -h --help"
        if [[ $cur != -* ]]; then
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
        fi
        ;;
    "history report")
        case $prev in
        --history|-history)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --spec|-spec)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur") $(compgen -W "$(_tracebook_builtins "$tb" builtin:)" -- "$cur"))
            return
            ;;
        --output|-output|-o)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            return
            ;;
        --last|-last)
            return
            ;;
        --format|-format)
            COMPREPLY=($(compgen -W "csv json xlsx html" -- "$cur"))
            return
            ;;
        --timeunit|-timeunit)
            COMPREPLY=($(compgen -W "ns us ms s" -- "$cur"))
            return
            ;;
        esac
        opts="--history --spec -o --output --last --format --csv-safe --fail-on-regression --timeunit -q --quiet -h --help"
        ;;
    "history list")
        case $prev in
        --history|-history)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --format|-format)
            COMPREPLY=($(compgen -W "console csv json" -- "$cur"))
            return
            ;;
        esac
        opts="--history --format -h --help"
        ;;
    "history remove")
        case $prev in
        --history|-history)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        --label|-label)
            return
            ;;
        --keep|-keep)
            return
            ;;
        esac
        opts="--history --label --keep -q --quiet -h --help"
        ;;
    "reports")
        opts="-h --help"
        if [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W "$(_tracebook_builtins "$tb")" -- "$cur"))
            return
        fi
        ;;
    "info")
        case $prev in
        --dir|-dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            return
            ;;
        esac
        opts="-dir --dir --rebuild --strict --keep-python-functions --keep-going -q --quiet -h --help"
        ;;
    "help")
        opts="-h --help"
        if ((COMP_CWORD == 2)) && [[ $cur != -* ]]; then
            COMPREPLY=($(compgen -W "export merge report query print compare history reports info help" -- "$cur"))
            return
        fi
        ;;
    *)
        return
        ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
    fi
}
complete -F _tracebook tracebook
