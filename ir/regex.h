/* RegexFullMatch's patterns: RE2 syntax (as ONNX specifies) translated into a POSIX
 * extended regular expression for <regex.h>, which the interpreter and the code that
 * the C and LLVM backends generate both run, so every backend matches the same way.
 *
 * The translation keeps what RE2 and POSIX ERE share and rewrites what RE2 writes
 * differently: the Perl classes \d \w \s (and negations) become POSIX bracket
 * classes, also inside brackets; escapes inside brackets become their characters;
 * `.` excludes newline as in RE2 (unless a leading (?s)); (?:...) and named groups
 * become plain groups; non-greedy quantifiers drop their `?` (greediness cannot change
 * whether the whole string matches); \A and \z become ^ and $; \xHH and \x{...} become
 * their UTF-8 bytes; a leading (?i) becomes REG_ICASE. \b and \B are kept (glibc
 * implements them). What has no POSIX form is refused with a message naming it:
 * Unicode classes (\p, \pL), \C, \Q..\E, backreferences, (?m), flags after the start,
 * more than KN_REGEX_MAX_UNICODE non-ASCII characters in one bracket expression.
 * A non-ASCII character outside brackets is a group of its UTF-8 bytes (one atom under a
 * quantifier in either matcher); under (?i), k, K and the Kelvin sign U+212A, and s, S
 * and the long s U+017F, are each an alternation of the pair, as RE2 folds them.
 * Non-ASCII characters in a bracket expression are code points, as in RE2 (with (?i)
 * also the Kelvin sign and long s pairs RE2 folds with k and s): each is
 * written out as its UTF-8 bytes, a range of them member by member (glibc's regcomp
 * refuses such a range in C.UTF-8). Every backend compiles the pattern
 * twice, in the C locale and with LC_CTYPE C.UTF-8 (newlocale/uselocale, whatever the
 * caller's locale), and matches a string that has a non-ASCII byte with the second
 * (in C.UTF-8), the others with the first (glibc's byte matcher, which agrees on ASCII
 * and is several times faster), so `.`, a negated bracket expression and a literal non-ASCII
 * character each match one UTF-8 character, as in RE2; the classes (\d \w \s,
 * [[:alpha:]]...) are written out as their ASCII members, as RE2 defines them, since
 * the locale's classes take non-ASCII letters. Where C.UTF-8 does not exist the
 * thread's locale stays (in the C locale: one byte). */
#ifndef KN_REGEX_H
#define KN_REGEX_H

#include <stddef.h>

/* REG_ICASE, REG_EXTENDED and REG_NOSUB as kiln passes them to regcomp, given as
 * plain ints so generated code can use them without including kiln's headers. */
enum { KN_REGEX_ICASE = 1 };

/* The locale matching runs in (LC_CTYPE only). */
#define KN_REGEX_LOCALE "C.UTF-8"

/* Non-ASCII characters a bracket expression may hold (ranges counted by members). */
#define KN_REGEX_MAX_UNICODE 512

/* Room for a translated pattern (bytes, NUL included). */
#define KN_REGEX_MAX 4096

/* Translates RE2 pattern `re2` into a POSIX ERE anchored at both ends ("^(...)$") in
 * out[0..cap). Returns 0 and sets *flags (KN_REGEX_ICASE), or -1 with a reason in
 * err[0..errcap) (the pattern is not supported, or regcomp rejects the translation). */
int kn_regex_translate(const char *re2, char *out, size_t cap, int *flags, char *err,
                       size_t errcap);

/* Matches NUL-terminated strings s[0..n) against a translated pattern: y[i] = 1 when
 * s[i] matches, else 0. Returns 0, or -1 when regcomp fails (out of memory). */
int kn_regex_match_all(const char *posix, int flags, const char *const *s, long long n,
                       unsigned char *y);

#endif
