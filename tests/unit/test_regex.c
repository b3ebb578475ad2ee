/* Unit tests of ir/regex.c, RegexFullMatch's RE2 -> POSIX ERE translation: one case a
 * line, an RE2 pattern, a string and whether RE2 matches the whole string (derived by
 * hand from RE2's syntax page), then patterns that must be refused with their reason. */
#include "ir/regex.h"
#include "test.h"

#include <string.h>

typedef struct match_case {
    const char *re2, *s;
    int want;
} match_case;

static const match_case matches[] = {
    {"abc", "abc", 1},
    {"abc", "abcd", 0},     /* a full match, not a search */
    {"a.c", "a\nc", 0},     /* '.' excludes newline */
    {"(?s)a.c", "a\nc", 1}, /* unless (?s) */
    {"\\d+", "0123", 1},
    {"\\d+", "12a", 0},
    {"\\D\\W\\S", "a-b", 1},    /* 'a' is \D, '-' is \W, 'b' is \S */
    {"\\D\\W\\S", "1-b", 0},    /* '1' is a digit */
    {"[\\w.-]+", "a_b.c-d", 1}, /* escapes inside brackets */
    {"[\\w.-]+", "a b", 0},
    {"[^\\d\\s]+", "ab!", 1},
    {"[^\\d\\s]+", "a1", 0},
    {"\\s", "\v", 0}, /* RE2's \s has no \v */
    {"\\s", "\t", 1},
    {"[]a]+", "]a]", 1}, /* ']' first is literal */
    {"[a\\-z]+", "-az", 1},
    {"[a\\-z]+", "b", 0}, /* not a range */
    {"[\\^x]", "^", 1},
    {"[[:upper:]]+", "AB", 1},
    {"[[:word:]]+", "a_1", 1},
    {"(?:ab)+", "abab", 1},
    {"(?P<n>a)b", "ab", 1},
    {"a+?b*?", "aab", 1}, /* non-greedy: the same full matches */
    {"a{2,3}", "aaaa", 0},
    {"a{2,}", "aaaa", 1},
    {"a{,2}", "a{,2}", 1}, /* not a repetition in RE2: literal */
    {"\\x41\\x{42}", "AB", 1},
    {"\\x{e9}+", "\xc3\xa9\xc3\xa9", 1}, /* UTF-8 bytes grouped under the quantifier */
    {"(?i)hello", "HeLLo", 1},
    {"\\Aab\\z", "ab", 1},
    {"\\bab\\b", "ab", 1},
    {"a\\.b", "a.b", 1},
    {"a\\.b", "axb", 0},
    {"a|b|", "", 1}, /* an empty alternative */
    {"\\(\\)\\*", "()*", 1},
    /* UTF-8: RE2 matches code points (e-acute \xc3\xa9, n-tilde \xc3\xb1, U+6C34
       \xe6\xb0\xb4, U+1F600 \xf0\x9f\x98\x80); its classes are ASCII */
    {"caf.", "caf\xc3\xa9", 1},   /* '.' is one character, not a byte */
    {"caf..", "caf\xc3\xa9", 0},  /* ... so two of them need two */
    {".", "\xe6\xb0\xb4", 1},     /* three bytes */
    {".", "\xf0\x9f\x98\x80", 1}, /* four */
    {"(?s).", "\xc3\xa9", 1},
    {"[^a]", "\xc3\xb1", 1}, /* a negated class: one character */
    {"[^a]{2}", "\xc3\xb1", 0},
    {"\\D", "\xc3\xa9", 1},
    {"\\W", "\xc3\xa9", 1}, /* \w is [0-9A-Za-z_] */
    {"\\w", "\xc3\xa9", 0},
    {"[[:alpha:]]", "\xc3\xa9", 0}, /* ASCII classes */
    {"[^[:alpha:]]", "\xc3\xa9", 1},
    {"\\S", "\xe6\xb0\xb4", 1},
    {"\xc3\xa9+", "\xc3\xa9\xc3\xa9", 1}, /* a literal character under + */
    {"\xc3\xa9+", "\xc3\xa9\xa9", 0},
    {"a.b",
     "a\xc3\xa9\xe6\xb0\xb4"
     "b",
     0},
    {"a.{2}b",
     "a\xc3\xa9\xe6\xb0\xb4"
     "b",
     1},
    /* non-ASCII characters in brackets: code points, ranges by code point (RE2 on
       UTF-8); an all-ASCII string goes to the C-locale matcher, which must agree */
    {"[\xc3\xa9]", "\xc3\xa9", 1},
    {"[\xc3\xa9]", "e", 0},
    {"[\xc3\xa9]{2}", "\xc3\xa9", 0}, /* one character, not two bytes */
    {"[\xc3\xa9]+", "\xc3\xa9\xc3\xa9", 1},
    {"[^\xc3\xa9]", "\xc3\xa9", 0},
    {"[^\xc3\xa9]", "\xc3\xb1", 1},
    {"[^\xc3\xa9]{2}", "\xc3\xb1", 0},
    {"[^\xc3\xa9]", "a", 1},                                 /* ASCII string */
    {"[\xc3\xa0-\xc3\xbf]+", "\xc3\xa9\xc3\xb1\xc3\xbc", 1}, /* U+E0..U+FF */
    {"[\xc3\xa0-\xc3\xbf]", "\xc3\x89", 0},                  /* U+C9 */
    {"[\xc3\xa0-\xc3\xbf]", "a", 0},
    {"[a-\xc3\xa9]", "z", 1}, /* U+61..U+E9 holds z, ~ and DEL */
    {"[a-\xc3\xa9]", "~", 1},
    {"[a-\xc3\xa9]", "\xc3\xa9", 1},
    {"[a-\xc3\xa9]", "\xc3\xaa", 0},
    {"[a-\xc3\xa9]", "A", 0},
    {"[\xe6\xb0\xb0-\xe6\xb0\xbf]+", "\xe6\xb0\xb4\xe6\xb0\xb4", 1}, /* U+6C30..U+6C3F */
    {"[\xe6\xb0\xb0-\xe6\xb0\xbf]", "\xe6\xb0\xaf", 0},              /* U+6C2F */
    {"[\\x{1F600}-\\x{1F64F}]", "\xf0\x9f\x98\x80", 1},              /* four-byte ends */
    {"[\\x{1F600}-\\x{1F64F}]", "\xe6\xb0\xb4", 0},
    {"[\\x{e9}]", "\xc3\xa9", 1},
    {"[\\w\xc3\xa9]+", "a\xc3\xa9_1", 1},
    {"[^\\w\xc3\xa9]", "\xc3\xb1", 1},
    {"[^\\w\xc3\xa9]", "\xc3\xa9", 0},
    {"[a-c\xc3\xa9-\xc3\xaa]+", "b\xc3\xaa\xc3\xa9", 1},
    {"[a-c\xc3\xa9-\xc3\xaa]+", "b\xc3\xab", 0},
    {"(?i)[\xc3\xa9]", "\xc3\x89", 1}, /* (?i): RE2 folds e-acute and E-acute */
    {"(?i)[^\xc3\xa9]", "\xc3\x89", 0},
    {"(?i)[\xc3\xa0-\xc3\xbf]", "\xc3\x89", 1},
    {"(?i)[\xe2\x84\xaa]", "k", 1}, /* RE2 folds the Kelvin sign U+212A with k, K */
    {"(?i)[\xe2\x84\xaa]", "K", 1},
    {"(?i)[^\xe2\x84\xaa]", "k", 0},
    {"[\xe2\x84\xaa]", "k", 0}, /* not without (?i) */
    {"(?i)[\xc5\xbf]", "S", 1}, /* and the long s U+017F with s, S */
    {"(?i)[k]", "\xe2\x84\xaa", 1},
    {"(?i)[s]+", "s\xc5\xbf", 1},
    {"(?i)[a-z]", "\xe2\x84\xaa", 1},
    {"(?i)[^k]", "\xe2\x84\xaa", 0},
    {"[k]", "\xe2\x84\xaa", 0},
    /* outside brackets too: (?i) folds the pairs in both directions, \x escapes alike */
    {"(?i)k", "\xe2\x84\xaa", 1},
    {"(?i)K+", "k\xe2\x84\xaaK", 1},
    {"(?i)\xe2\x84\xaa", "k", 1},
    {"(?i)\xe2\x84\xaa", "K", 1},
    {"(?i)\xe2\x84\xaa", "x", 0},
    {"(?i)\\x{212a}s", "kS", 1},
    {"(?i)\\x6b", "\xe2\x84\xaa", 1},
    {"(?i)s", "\xc5\xbf", 1},
    {"(?i)\xc5\xbf", "S", 1},
    {"(?i)s", "t", 0},
    {"k", "\xe2\x84\xaa", 0}, /* not without (?i) */
    {"\xe2\x84\xaa", "k", 0},
    /* a non-ASCII character under a quantifier is one atom in the byte matcher too
     * (an all-ASCII string) */
    {"a\xc3\xa9?", "a", 1},
    {"a\xc3\xa9?b", "ab", 1},
    {"a\xc3\xa9*", "a\xc3\xa9\xc3\xa9", 1},
};

typedef struct refuse_case {
    const char *re2, *why;
} refuse_case;

static const refuse_case refusals[] = {
    {"\\pL", "Unicode classes"},
    {"\\p{Greek}", "Unicode classes"},
    {"(a)\\1", "backreferences"},
    {"\\C", "\\C"},
    {"\\Qa.b\\E", "\\Q"},
    {"a(?i)b", "group flags"},
    {"(?m)^a$", "group flags"},
    {"[\xc3]", "not UTF-8"},
    {"a\xc3", "not UTF-8"},
    {"a\xe2\x84", "not UTF-8"},
    {"[\xc3\xa9-a]", "bad range"},
    {"[\xed\xa0\x80]", "not UTF-8"},                            /* a surrogate */
    {"[\xe4\xb8\x80-\xe9\xbe\xa5]", "more than 512 non-ASCII"}, /* 20,902 members */
    {"[\\W]", "no POSIX form"},
    {"a{1001}", "bad repetition"},
    {"a**", "bad repetition operator"},
    {"(ab", "missing ')'"},
    {"ab)", "unexpected ')'"},
    {"[ab", "missing ']'"},
    {"ab\\", "ends with a backslash"},
};

int main(void) {
    for (size_t i = 0; i < sizeof matches / sizeof *matches; i++) {
        char posix[KN_REGEX_MAX], err[200] = "";
        int flags;
        int rc = kn_regex_translate(matches[i].re2, posix, sizeof posix, &flags, err, sizeof err);
        CHECK(rc == 0);
        if (rc) {
            fprintf(stderr, "  pattern %s: %s\n", matches[i].re2, err);
            continue;
        }
        const char *s = matches[i].s;
        unsigned char y = 2;
        CHECK(kn_regex_match_all(posix, flags, &s, 1, &y) == 0);
        CHECK(y == matches[i].want);
        if (y != matches[i].want)
            fprintf(stderr, "  pattern %s (POSIX %s) on '%s': %d\n", matches[i].re2, posix, s, y);
    }
    for (size_t i = 0; i < sizeof refusals / sizeof *refusals; i++) {
        char posix[KN_REGEX_MAX], err[200] = "";
        int flags;
        CHECK(kn_regex_translate(refusals[i].re2, posix, sizeof posix, &flags, err, sizeof err));
        CHECK(strstr(err, refusals[i].why) != NULL);
        if (!strstr(err, refusals[i].why))
            fprintf(stderr, "  pattern %s: '%s', expected '%s'\n", refusals[i].re2, err,
                    refusals[i].why);
    }
    return TEST_DONE();
}
