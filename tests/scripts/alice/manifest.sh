# The tree under the current directory, one line per name: path, type, size, mode, links,
# contents (a checksum; a symlink's target) and extended attributes. No times.
find . -mindepth 1 | LC_ALL=C sort | while read -r p; do
    case $(stat -c %F "$p") in
        "regular file"|"regular empty file") c=$(cksum < "$p") ;;
        "symbolic link") c=$(readlink "$p") ;;
        *) c=- ;;
    esac
    x=$(getfattr -d --absolute-names "$p" 2>/dev/null | grep -v '^#' | LC_ALL=C sort | tr '\n' ' ')
    echo "$p $(stat -c '%F %s %a %h' "$p") $c $x"
done
