-- Issue 24, hole 2: an account's email_verified now also vouches for its password (single
-- sign-on links into a password account only when it is set: lib/sso/sso-sign-in.ts). Before,
-- invited accounts were created verified, though whoever held the invite (or a reset) link chose
-- their password. Every account whose password was set through a link loses the mark; its
-- holder restores it by signing in with the password and then with single sign-on once.
UPDATE `user` SET `email_verified` = 0 WHERE `id` IN (SELECT `user_id` FROM `person_links` WHERE `used_at` IS NOT NULL);
