-- Issue 24, hole 6: before names refused control characters, a NUL could be stored inside a
-- person's name. Everything reads such a name cut at the NUL, so renaming it (a compare-and-swap
-- on the name as read: lib/people/update-person.ts) never matched and answered 500 for ever.
-- Keep the part everyone saw, cut on bytes (instr and substr on the blob), as the readers did.
UPDATE `user` SET `name` = CAST(substr(CAST(`name` AS BLOB), 1, instr(CAST(`name` AS BLOB), x'00') - 1) AS TEXT) WHERE instr(CAST(`name` AS BLOB), x'00') > 0;
