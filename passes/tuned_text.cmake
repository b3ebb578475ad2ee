# Writes the tuning table IN (passes/tuned.txt) to OUT as the C string kn_tuned_text
# (passes/tuned.c): one string literal a line, so the generated file reads as the table.
file(READ ${IN} text)
string(REPLACE "\\" "\\\\" text "${text}")
string(REPLACE "\"" "\\\"" text "${text}")
string(REPLACE "\n" "\\n\"\n    \"" text "${text}")
file(WRITE ${OUT}.tmp "/* Generated from passes/tuned.txt by passes/tuned_text.cmake: do not edit. */\n"
     "extern const char kn_tuned_text[];\nconst char kn_tuned_text[] =\n    \"${text}\";\n")
file(RENAME ${OUT}.tmp ${OUT})
