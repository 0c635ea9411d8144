function __gdpcli_path --description 'The command path being completed: gdpcli calibrate sgd'
    set -l path gdpcli
    set -l option
    for word in (commandline -opc)[2..-1]
        if test -n "$option"
            set option
        else if contains -- $word (__gdpcli_value_options $path)
            set option $word
        else if contains -- $word (__gdpcli_subcommands $path)
            set path "$path $word"
        end
    end
    echo $path
end

function __gdpcli_is --description 'Whether the command path being completed is $argv'
    test (__gdpcli_path) = "$argv"
end

complete -c gdpcli -f
