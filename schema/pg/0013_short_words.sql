-- pg 0013: short words are indexed as written, as FTS5's porter tokenizer indexes them.
--
-- FTS5's porter tokenizer passes a token of fewer than three bytes through unstemmed; the Porter
-- stemmer of `hermes_search` stemmed every token, so on PostgreSQL `ls` was indexed and searched
-- as `l` (`sessions search ls` also found `crontab -l`), `is` as `i`, `as` as `a`, `js` as `j`,
-- `vs` as `v`, `oy` as `oi`: the two engines found different messages and facts for the same
-- query. The stemmer changes exactly two kinds of two-character token (a letter or digit then
-- `s`, and a vowel then `y`); hermes_tokens() now gives those a fixed tail of digits the stemmer
-- leaves alone (`ls` -> `ls0hs0`), in stored text and queries alike, so each stays its own
-- lexeme. ts_headline reads the raw text and cannot mark them: the excerpt code then marks the
-- index's own tokens (hermes_store.pghighlight). Stored vectors that change are recomputed.

SET LOCAL statement_timeout = 0;
SET LOCAL maintenance_work_mem = '256MB';

-- pg 0005's hermes_tokens(), unchanged: folded text, runs of letters and digits split by spaces
CREATE OR REPLACE FUNCTION hermes_fold_tokens(body text, cap integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT regexp_replace(
        CASE WHEN left(coalesce(body, ''), cap) ~ '[\u00c0-\u024f\u1e00-\u1eff]'
             THEN translate(left(coalesce(body, ''), cap),
                  'ÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĨĩĪīĬĭĮįİĴĵĶķĹĺĻļĽľŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžƠơƯưǍǎǏǐǑǒǓǔǕǖǗǘǙǚǛǜǞǟǠǡǦǧǨǩǪǫǬǭǰǴǵǸǹǺǻȀȁȂȃȄȅȆȇȈȉȊȋȌȍȎȏȐȑȒȓȔȕȖȗȘșȚțȞȟȦȧȨȩȪȫȬȭȮȯȰȱȲȳḀḁḂḃḄḅḆḇḈḉḊḋḌḍḎḏḐḑḒḓḔḕḖḗḘḙḚḛḜḝḞḟḠḡḢḣḤḥḦḧḨḩḪḫḬḭḮḯḰḱḲḳḴḵḶḷḸḹḺḻḼḽḾḿṀṁṂṃṄṅṆṇṈṉṊṋṌṍṎṏṐṑṒṓṔṕṖṗṘṙṚṛṜṝṞṟṠṡṢṣṤṥṦṧṨṩṪṫṬṭṮṯṰṱṲṳṴṵṶṷṸṹṺṻṼṽṾṿẀẁẂẃẄẅẆẇẈẉẊẋẌẍẎẏẐẑẒẓẔẕẖẗẘẙẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặẸẹẺẻẼẽẾếỀềỂểỄễỆệỈỉỊịỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợỤụỦủỨứỪừỬửỮữỰựỲỳỴỵỶỷỸỹ',
                  'AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYyAaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSsSsTtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwyAaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOoOoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy')
             ELSE left(coalesce(body, ''), cap) END,
        '[^[:alnum:]]+', ' ', 'g') $$;

CREATE OR REPLACE FUNCTION hermes_tokens(body text, cap integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT regexp_replace(hermes_fold_tokens(body, cap),
                                '\m([[:alnum:]][Ss]|[AEIOUaeiou][Yy])\M', '\10hs0', 'g') $$;

-- the stored vectors whose text holds such a word (an UPDATE recomputes generated columns)
UPDATE messages SET search_text = search_text
 WHERE hermes_tokens(coalesce(search_text, content), CASE WHEN role = 'tool' THEN 8192 ELSE 262144 END)
       <> hermes_fold_tokens(coalesce(search_text, content), CASE WHEN role = 'tool' THEN 8192 ELSE 262144 END)
    OR hermes_tokens(calls, 16384) <> hermes_fold_tokens(calls, 16384);
UPDATE facts SET content = content
 WHERE hermes_tokens(content, 262144) <> hermes_fold_tokens(content, 262144)
    OR hermes_tokens(tags, 65536) <> hermes_fold_tokens(tags, 65536);
UPDATE builtin_index_entries SET content = content
 WHERE hermes_tokens(content, 262144) <> hermes_fold_tokens(content, 262144);
