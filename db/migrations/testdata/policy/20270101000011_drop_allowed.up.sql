-- rivet:allow-drop deprecated-in=0.2 reason=extra was replaced by meta in 0.2
-- and no supported release reads it since 0.4.
ALTER TABLE nodes DROP COLUMN extra;
