-- rivet:allow-drop deprecated-in=0.2 reason=extra was replaced by meta in 0.2
ALTER TABLE nodes DROP COLUMN extra;
