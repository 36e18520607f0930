// Whether a password on an account is vouched for, so that single sign-on may sign into it and
// grant it roles (issue 24, hole 2; the rule is explained at admitToAccount, sso-sign-in.ts): its
// email is verified — by the operator who made it, or by its holder signing in with the password
// and then with single sign-on — or it has no password at all. One `?1`: the user id; for guards.
export const VOUCHED_SQL = `exists (select 1 from "user" u where u.id = ?1 and (u.email_verified = 1
  or not exists (select 1 from account a where a.user_id = ?1 and a.provider_id = 'credential'
                 and a.password is not null)))`;
