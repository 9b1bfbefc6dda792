-- An epoch's loss is NULL when it is not a number (the model diverged: NaN/inf cannot travel in JSON).
ALTER TABLE epochs ALTER COLUMN loss DROP NOT NULL;
