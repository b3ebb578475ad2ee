/* RE2 patterns to POSIX extended regular expressions (see ir/regex.h for what is kept,
 * rewritten and refused). One pass over the pattern, writing into a bounded buffer;
 * a bracket expression is read whole into a set (literal bytes, ranges, POSIX class
 * names) and written back in the order POSIX needs: ']' first, '-' last, '^' not
 * first, '[' where it cannot open a class. */
#include "ir/regex.h"

#include <locale.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct tr {
    const char *p; /* next pattern byte */
    char *out;
    size_t cap, len;
    char *err;
    size_t errcap;
    bool failed, dotall, icase;
} tr;

static int fail(tr *t, const char *fmt, ...) {
    if (!t->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->err, t->errcap, fmt, ap);
        va_end(ap);
    }
    t->failed = true;
    return -1;
}

static void emit(tr *t, const char *s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        fail(t, "the pattern is too long");
        return;
    }
    memcpy(t->out + t->len, s, n);
    t->len += n;
    t->out[t->len] = 0;
}

static void emits(tr *t, const char *s) {
    emit(t, s, strlen(s));
}

static void emitc(tr *t, char c) {
    emit(t, &c, 1);
}

/* A literal byte outside brackets. */
static void literal(tr *t, unsigned char c) {
    if (strchr(".[]{}()\\*+?^$|", c) && c) emitc(t, '\\');
    emitc(t, (char)c);
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* \xHH or \x{H...} after the 'x' (t->p at the next byte): the code point, or -1. */
static long hex_escape(tr *t) {
    long v = 0;
    if (*t->p == '{') {
        int nd = 0;
        for (t->p++; *t->p && *t->p != '}'; t->p++, nd++) {
            int h = hexval(*t->p);
            if (h < 0 || nd >= 6) return fail(t, "bad \\x{...} escape");
            v = v * 16 + h;
        }
        if (*t->p != '}' || !nd) return fail(t, "bad \\x{...} escape");
        t->p++;
    } else {
        for (int k = 0; k < 2; k++, t->p++) {
            int h = hexval(*t->p);
            if (h < 0) return fail(t, "bad \\x escape (two hex digits are needed)");
            v = v * 16 + h;
        }
    }
    if (v > 0x10ffff || v == 0) return fail(t, "\\x escape of code point %lx is not supported", v);
    return v;
}

/* The UTF-8 bytes of code point v into b; returns their count. */
static int utf8(long v, char *b) {
    if (v < 0x80) return b[0] = (char)v, 1;
    if (v < 0x800) return b[0] = (char)(0xc0 | v >> 6), b[1] = (char)(0x80 | (v & 63)), 2;
    if (v < 0x10000)
        return b[0] = (char)(0xe0 | v >> 12), b[1] = (char)(0x80 | ((v >> 6) & 63)),
               b[2] = (char)(0x80 | (v & 63)), 3;
    return b[0] = (char)(0xf0 | v >> 18), b[1] = (char)(0x80 | ((v >> 12) & 63)),
           b[2] = (char)(0x80 | ((v >> 6) & 63)), b[3] = (char)(0x80 | (v & 63)), 4;
}

/* The control character of escape letter c (n t r f v a), or 0. */
/* A character outside brackets (a byte below 0x80, else a code point): a non-ASCII one
 * as its UTF-8 bytes in a group, so that a quantifier after it takes the whole
 * character in the byte matcher too (C locale, for all-ASCII strings); under (?i) the
 * Kelvin sign U+212A and k or K, the long s U+017F and s or S, as an alternation of the
 * pair, since RE2 folds them and neither glibc matcher does (REG_ICASE then takes
 * both ASCII cases). */
static void literal_char(tr *t, long v) {
    static const struct {
        char ascii;
        long u;
        const char *posix;
    } folds[] = {{'k', 0x212a, "(k|\xe2\x84\xaa)"}, {'s', 0x17f, "(s|\xc5\xbf)"}};
    for (int f = 0; t->icase && f < 2; f++)
        if (v == folds[f].u || v == folds[f].ascii || v == folds[f].ascii - 'a' + 'A') {
            emits(t, folds[f].posix);
            return;
        }
    if (v < 0x80) {
        literal(t, (unsigned char)v);
        return;
    }
    char b[4];
    int nb = utf8(v, b);
    emitc(t, '(');
    emit(t, b, (size_t)nb);
    emitc(t, ')');
}

static char control(char c) {
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case 'a': return '\a';
    default: return 0;
    }
}

/* ---- bracket expressions ---- */

typedef struct cset {
    bool neg, has[256]; /* single bytes */
    unsigned char lo[64], hi[64];
    int nranges;
    long ulo[KN_REGEX_MAX_UNICODE], uhi[KN_REGEX_MAX_UNICODE]; /* non-ASCII code points
                                                                  and ranges (lo == hi: one) */
    int nu;
} cset;

/* Whether ASCII byte c is in the POSIX class `name` as RE2 defines it (ASCII only). */
static bool in_class(const char *name, int c) {
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool graph = c > 0x20 && c < 0x7f;
    if (!strcmp(name, "alnum")) return upper || lower || digit;
    if (!strcmp(name, "alpha")) return upper || lower;
    if (!strcmp(name, "blank")) return c == ' ' || c == '\t';
    if (!strcmp(name, "cntrl")) return c < 0x20 || c == 0x7f;
    if (!strcmp(name, "digit")) return digit;
    if (!strcmp(name, "graph")) return graph;
    if (!strcmp(name, "lower")) return lower;
    if (!strcmp(name, "print")) return graph || c == ' ';
    if (!strcmp(name, "punct")) return graph && !upper && !lower && !digit;
    if (!strcmp(name, "space")) return c == ' ' || (c >= '\t' && c <= '\r');
    if (!strcmp(name, "upper")) return upper;
    return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); /* xdigit */
}

/* A class becomes its ASCII bytes, not a POSIX [:name:]: matching runs in a UTF-8
 * locale (below), where [:alpha:] would take non-ASCII letters and RE2's does not. */
static void add_class(tr *t, cset *s, const char *name) {
    (void)t;
    for (int c = 1; c < 0x80; c++)
        if (in_class(name, c)) s->has[c] = true;
}

/* The code point of the UTF-8 sequence starting with byte c (already read) at t->p
 * (advanced past it), or -1 for bytes that are not UTF-8 (overlong forms, surrogates
 * and values above 0x10ffff included). */
static long utf8_decode(tr *t, unsigned char c) {
    int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : -1;
    long v = n == 3 ? c & 7 : n == 2 ? c & 15 : c & 31;
    if (n < 0 || c > 0xf4) return fail(t, "the pattern is not UTF-8");
    for (int k = 0; k < n; k++) {
        unsigned char b = (unsigned char)*t->p;
        if ((b & 0xc0) != 0x80) return fail(t, "the pattern is not UTF-8");
        v = v << 6 | (b & 63);
        t->p++;
    }
    static const long least[4] = {0, 0x80, 0x800, 0x10000};
    if (v < least[n] || v > 0x10ffff || (v >= 0xd800 && v < 0xe000))
        return fail(t, "the pattern is not UTF-8");
    return v;
}

/* One element of a bracket expression at t->p: a character (returned, >= 0: a byte
 * below 0x80, else a code point), or a class added to s (returns -2). */
static long bracket_atom(tr *t, cset *s) {
    unsigned char c = (unsigned char)*t->p++;
    if (c >= 0x80) return utf8_decode(t, c);
    if (c == '[' && *t->p == ':') {
        const char *e = strstr(t->p, ":]");
        static const char *const names[] = {"alnum", "alpha", "ascii", "blank", "cntrl",
                                            "digit", "graph", "lower", "print", "punct",
                                            "space", "upper", "word",  "xdigit"};
        if (!e) return fail(t, "unterminated [: class");
        size_t n = (size_t)(e - t->p - 1);
        for (size_t k = 0; k < sizeof names / sizeof *names; k++)
            if (strlen(names[k]) == n && !strncmp(t->p + 1, names[k], n)) {
                t->p = e + 2;
                if (!strcmp(names[k], "word")) {
                    add_class(t, s, "alnum");
                    s->has['_'] = true;
                } else if (!strcmp(names[k], "ascii")) {
                    s->lo[s->nranges] = 1, s->hi[s->nranges++] = 0x7f;
                } else {
                    add_class(t, s, names[k]);
                }
                return -2;
            }
        return fail(t, "unknown class [:%.*s:]", (int)n, t->p + 1);
    }
    if (c != '\\') return c;
    char e = *t->p++;
    switch (e) {
    case 'd': add_class(t, s, "digit"); return -2;
    case 'w':
        add_class(t, s, "alnum");
        s->has['_'] = true;
        return -2;
    case 's':
        for (const char *w = "\t\n\f\r "; *w; w++) s->has[(unsigned char)*w] = true;
        return -2;
    case 'x': return hex_escape(t);
    case 0: /* stay on the terminating NUL */
        t->p--;
        return fail(t, "the pattern ends with a backslash");
    default:
        if (control(e)) return (unsigned char)control(e);
        if ((unsigned char)e < 0x80 && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", e))
            return (unsigned char)e;
        return fail(t, "escape \\%c in a bracket expression has no POSIX form", e);
    }
}

/* Whether ASCII byte c is in s as a single byte or in one of its byte ranges. */
static bool cset_has(const cset *s, int c) {
    if (s->has[c]) return true;
    for (int r = 0; r < s->nranges; r++)
        if (s->lo[r] <= c && c <= s->hi[r]) return true;
    return false;
}

static void bracket(tr *t) {
    cset s;
    memset(&s, 0, sizeof s);
    if (*t->p == '^') s.neg = true, t->p++;
    bool first = true;
    long nonascii = 0;
    while (!t->failed) {
        if (!*t->p) {
            fail(t, "missing ']'");
            return;
        }
        if (*t->p == ']' && !first) {
            t->p++;
            break;
        }
        first = false;
        long a = bracket_atom(t, &s), b = a;
        if (a == -1) return;
        if (a == -2) continue;
        if (t->p[0] == '-' && t->p[1] && t->p[1] != ']') {
            t->p++;
            b = bracket_atom(t, &s);
            if (b == -1) return;
            if (b == -2 || b < a) {
                fail(t, "bad range in a bracket expression");
                return;
            }
        }
        if (b >= 0x80) { /* the non-ASCII part: code points */
            long lo = a < 0x80 ? 0x80 : a;
            nonascii += b - lo + 1;
            if (nonascii > KN_REGEX_MAX_UNICODE) { /* then s.nu is within bounds too */
                fail(t,
                     "more than %d non-ASCII characters in a bracket expression are not "
                     "supported (each is written out: POSIX regcomp in C.UTF-8 takes no "
                     "range of them)",
                     KN_REGEX_MAX_UNICODE);
                return;
            }
            s.ulo[s.nu] = a < 0x80 ? 0x80 : a;
            s.uhi[s.nu++] = b;
            if (a >= 0x80) continue;
            b = 0x7f;
        }
        if (a == b) {
            s.has[a] = true;
            continue;
        }
        if (s.nranges == 64) {
            fail(t, "too many ranges in a bracket expression");
            return;
        }
        s.lo[s.nranges] = (unsigned char)a;
        s.hi[s.nranges++] = (unsigned char)b;
    }
    /* (?i): RE2 folds the Kelvin sign U+212A with k and K, the long s U+017F with s and
     * S; neither glibc's byte matcher (all-ASCII strings) nor its C.UTF-8 one does for
     * the Kelvin sign, so each side of the pair joins a set that holds the other
     * (REG_ICASE then takes both ASCII cases) */
    static const struct {
        int ascii;
        long u;
    } folds[] = {{'k', 0x212a}, {'s', 0x17f}};
    for (int f = 0; t->icase && f < 2; f++) {
        bool has_u = false,
             has_a = cset_has(&s, folds[f].ascii) || cset_has(&s, folds[f].ascii - 'a' + 'A');
        for (int u = 0; u < s.nu; u++) has_u |= s.ulo[u] <= folds[f].u && folds[f].u <= s.uhi[u];
        if (has_u) s.has[folds[f].ascii] = true;
        if (has_a && !has_u && s.nu < KN_REGEX_MAX_UNICODE)
            s.ulo[s.nu] = s.uhi[s.nu] = folds[f].u, s.nu++;
    }
    /* ranges whose ends POSIX would read specially become single bytes */
    for (int r = 0; r < s.nranges; r++)
        if (strchr("]-^[", s.lo[r]) || strchr("]-^[", s.hi[r]) || s.lo[r] == s.hi[r]) {
            for (int c = s.lo[r]; c <= s.hi[r]; c++) s.has[c] = true;
            s.lo[r] = 1, s.hi[r] = 0; /* empty: skipped below */
        }
    int count = 0;
    for (int c = 1; c < 256; c++) count += s.has[c];
    if (!s.neg && count == 1 && s.has['^'] && !s.nranges && !s.nu) {
        emits(t, "\\^");
        return;
    }
    emitc(t, '[');
    if (s.neg) emitc(t, '^');
    if (s.has[']']) emitc(t, ']');
    for (int r = 0; r < s.nranges; r++)
        if (s.lo[r] <= s.hi[r]) {
            emitc(t, (char)s.lo[r]);
            emitc(t, '-');
            emitc(t, (char)s.hi[r]);
        }
    for (int c = 1; c < 256; c++)
        if (s.has[c] && !strchr("]-^[", c)) emitc(t, (char)c);
    /* non-ASCII members as their UTF-8 bytes, each range written out member by member
     * (glibc's regcomp refuses a range with a non-ASCII end in C.UTF-8: "Invalid
     * collation character"): one character each where matching runs in C.UTF-8 (strings
     * with a non-ASCII byte); in the C locale bytes >= 0x80, which an all-ASCII string
     * never holds, so the byte matcher still answers as RE2 on those strings */
    for (int u = 0; u < s.nu; u++)
        for (long v = s.ulo[u]; v <= s.uhi[u]; v++) {
            char b[4];
            emit(t, b, (size_t)utf8(v, b));
        }
    if (s.has['[']) emitc(t, '[');
    if (s.has['^']) emitc(t, '^');
    if (s.has['-']) emitc(t, '-');
    emitc(t, ']');
}

/* ---- the pattern ---- */

/* After a quantifier: RE2's non-greedy '?' is dropped (see ir/regex.h). */
static void lazy(tr *t) {
    if (*t->p == '?') t->p++;
}

/* {n}, {n,} or {n,m} at t->p (on the '{'): emitted if valid, else a literal '{'. */
static void repeat(tr *t) {
    const char *q = t->p + 1;
    long n = 0, m = -1;
    int nd = 0;
    for (; *q >= '0' && *q <= '9'; q++, nd++) n = n * 10 + (*q - '0');
    if (nd && *q == ',') {
        q++;
        if (*q >= '0' && *q <= '9')
            for (m = 0; *q >= '0' && *q <= '9'; q++) m = m * 10 + (*q - '0');
        else
            m = -2; /* open */
    }
    if (!nd || *q != '}' || nd > 4) {
        emits(t, "\\{");
        t->p++;
        return;
    }
    if (n > 1000 || m > 1000 || (m >= 0 && m < n)) {
        fail(t, "bad repetition {%.*s}", (int)(q - t->p - 1), t->p + 1);
        return;
    }
    emit(t, t->p, (size_t)(q + 1 - t->p));
    t->p = q + 1;
    lazy(t);
}

static void escape(tr *t) {
    char e = *t->p++;
    switch (e) {
    case 'd': emits(t, "[0-9]"); return; /* ASCII, as RE2's (see add_class) */
    case 'D': emits(t, "[^0-9]"); return;
    case 'w': emits(t, "[0-9A-Za-z_]"); return;
    case 'W': emits(t, "[^0-9A-Za-z_]"); return;
    case 's': emits(t, "[\t\n\f\r ]"); return;
    case 'S': emits(t, "[^\t\n\f\r ]"); return;
    case 'b': emits(t, "\\b"); return;
    case 'B': emits(t, "\\B"); return;
    case 'A': emitc(t, '^'); return;
    case 'z': emitc(t, '$'); return;
    case 'x': {
        long v = hex_escape(t);
        if (v >= 0) literal_char(t, v);
        return;
    }
    case 'p':
    case 'P': fail(t, "Unicode classes (\\%c) are not supported", e); return;
    case 'C': fail(t, "\\C (any byte) is not supported"); return;
    case 'Q': fail(t, "\\Q...\\E quoting is not supported"); return;
    case 0: /* stay on the terminating NUL */
        t->p--;
        fail(t, "the pattern ends with a backslash");
        return;
    default:
        if (control(e)) {
            emitc(t, control(e));
            return;
        }
        if (e >= '0' && e <= '9') {
            fail(t, "\\%c: backreferences and octal escapes are not supported", e);
            return;
        }
        if ((unsigned char)e < 0x80 && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", e)) {
            literal(t, (unsigned char)e);
            return;
        }
        fail(t, "unknown escape \\%c", e);
    }
}

/* A leading (?flags): i sets REG_ICASE, s makes '.' match newline, U (ungreedy) changes
 * nothing for a full match. */
static void leading_flags(tr *t, int *flags) {
    if (strncmp(t->p, "(?", 2)) return;
    const char *q = t->p + 2;
    while (*q == 'i' || *q == 's' || *q == 'U') q++;
    if (*q != ')' || q == t->p + 2) return; /* not a flag group: the main loop reports it */
    for (const char *f = t->p + 2; f < q; f++) {
        if (*f == 'i') *flags |= KN_REGEX_ICASE, t->icase = true;
        if (*f == 's') t->dotall = true;
    }
    t->p = q + 1;
}

int kn_regex_translate(const char *re2, char *out, size_t cap, int *flags, char *err,
                       size_t errcap) {
    tr t = {.p = re2, .out = out, .cap = cap, .err = err, .errcap = errcap};
    *flags = 0;
    if (cap) out[0] = 0;
    leading_flags(&t, flags);
    emits(&t, "^(");
    int depth = 0;
    while (!t.failed && *t.p) {
        char c = *t.p;
        switch (c) {
        case '\\':
            t.p++;
            escape(&t);
            break;
        case '[':
            t.p++;
            bracket(&t);
            break;
        case '(':
            t.p++;
            depth++;
            if (*t.p == '?') {
                if (t.p[1] == ':')
                    t.p += 2;
                else if ((t.p[1] == 'P' && t.p[2] == '<') || t.p[1] == '<') {
                    const char *e = strchr(t.p, '>');
                    if (!e) {
                        fail(&t, "unterminated group name");
                        break;
                    }
                    t.p = e + 1;
                } else {
                    fail(&t,
                         "group flags '(?%c' are not supported (only a leading (?i), (?s) "
                         "or (?U))",
                         t.p[1]);
                    break;
                }
            }
            emitc(&t, '(');
            if (*t.p == '*' || *t.p == '+' || *t.p == '?')
                fail(&t, "missing argument to repetition operator");
            break;
        case ')':
            if (--depth < 0) {
                fail(&t, "unexpected ')'");
                break;
            }
            t.p++;
            emitc(&t, ')');
            break;
        case '.':
            t.p++;
            emits(&t, t.dotall ? "." : "[^\n]");
            break;
        case '*':
        case '+':
        case '?':
            t.p++;
            emitc(&t, c);
            lazy(&t);
            if (*t.p == '*' || *t.p == '+' || *t.p == '?')
                fail(&t, "bad repetition operator '%c%c'", c, *t.p);
            break;
        case '{': repeat(&t); break;
        case '}':
        case ']':
            t.p++;
            literal(&t, (unsigned char)c);
            break;
        default: /* ^ $ | and ordinary characters */
            t.p++;
            if ((unsigned char)c >= 0x80) {
                long v = utf8_decode(&t, (unsigned char)c);
                if (v >= 0) literal_char(&t, v);
            } else if (t.icase && strchr("kKsS", c))
                literal_char(&t, c);
            else
                emitc(&t, c);
        }
    }
    if (!t.failed && depth) fail(&t, "missing ')'");
    emits(&t, ")$");
    if (t.failed) return -1;
    regex_t re;
    locale_t loc = newlocale(LC_CTYPE_MASK, KN_REGEX_LOCALE, (locale_t)0), old = uselocale(loc);
    int rc =
        regcomp(&re, out, REG_EXTENDED | REG_NOSUB | (*flags & KN_REGEX_ICASE ? REG_ICASE : 0));
    uselocale(old);
    if (loc) freelocale(loc);
    if (rc) {
        char msg[128];
        regerror(rc, &re, msg, sizeof msg);
        snprintf(err, errcap, "the POSIX form of the pattern does not compile: %s", msg);
        return -1;
    }
    regfree(&re);
    return 0;
}

int kn_regex_match_all(const char *posix, int flags, const char *const *s, long long n,
                       unsigned char *y) {
    /* as compiled code does (ir/kir.h, KX_REGEX): ASCII strings through the pattern
     * compiled in the C locale (glibc's byte matcher, several times faster), the others
     * through the one compiled in C.UTF-8; uselocale((locale_t)0), where a locale is
     * missing, keeps the thread's */
    regex_t rb, ru;
    int f = REG_EXTENDED | REG_NOSUB | (flags & KN_REGEX_ICASE ? REG_ICASE : 0);
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    locale_t u = newlocale(LC_CTYPE_MASK, KN_REGEX_LOCALE, (locale_t)0), old = uselocale(c);
    int rc = regcomp(&rb, posix, f) ? -1 : 0;
    uselocale(u);
    if (!rc && regcomp(&ru, posix, f)) {
        regfree(&rb);
        rc = -1;
    }
    for (long long i = 0; i < n && !rc; i++) {
        const unsigned char *q = (const unsigned char *)s[i];
        while (*q && *q < 0x80) q++;
        y[i] = regexec(*q ? &ru : &rb, s[i], 0, NULL, 0) == 0;
    }
    if (!rc) {
        regfree(&rb);
        regfree(&ru);
    }
    uselocale(old);
    if (c) freelocale(c);
    if (u) freelocale(u);
    return rc;
}
