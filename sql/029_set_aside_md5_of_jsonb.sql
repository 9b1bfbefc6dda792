-- set_aside_results.frame_md5 is taken of the frame as jsonb writes it (frame::text), no longer of the text the
-- controller sent: the same message is one row whether a controller spelled a NUL in its text as the escape \ufffd
-- or as U+FFFD, and whatever its whitespace or key order (jsonb keeps numbers as written: 1 and 1.0 stay two). A controller between
-- 0274d2b and a9218b0 wrote a NUL in a message's text as the escape \ufffd, later ones the character U+FFFD itself:
-- the same message replayed to a newer controller would have been a second row. Rows of the same run and agent whose
-- frames have the same new key are one: the first kept.
DELETE FROM set_aside_results a USING set_aside_results b
WHERE a.run_id = b.run_id AND a.agent_id = b.agent_id AND md5(a.frame::text) = md5(b.frame::text) AND a.id > b.id;
UPDATE set_aside_results SET frame_md5 = md5(frame::text) WHERE frame_md5 IS DISTINCT FROM md5(frame::text);
