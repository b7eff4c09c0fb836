#!/bin/sh
# embed.sh NAME FILE - print FILE as C source: `const unsigned char NAME[]`
# (its bytes, then a NUL) and `const size_t NAME_len` (the file's length).
# Plain od and sed, so the build needs no xxd or JavaScript toolchain.
set -eu
name=$1
file=$2
printf '/* generated from %s by embed.sh: do not edit */\n#include <stddef.h>\n' "${file##*/}"
printf 'extern const unsigned char %s[];\nextern const size_t %s_len;\n' "$name" "$name"
printf 'const unsigned char %s[] = {\n' "$name"
od -An -v -tu1 "$file" | sed 's/^ *//; s/  */,/g; s/$/,/'
printf '0};\nconst size_t %s_len = sizeof %s - 1;\n' "$name" "$name"
