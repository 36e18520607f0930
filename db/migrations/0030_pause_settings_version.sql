-- What a pause decides from and rarely changes — the queues, the routing rules, the policy
-- rules — is kept in each instance's memory (lib/batches/pause-settings.ts) and not read again on
-- every pause. This counter, raised by a trigger on every change to those tables (by this app,
-- another instance, the CLI or plain SQL), is what makes that safe: a pause planned from a copy
-- read at version N writes only if the counter is still N (a guard in its write batch), and is
-- otherwise planned again from a fresh read. One row; nothing else writes it.
CREATE TABLE `pause_settings_version` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 1),
	`version` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `pause_settings_version` (`id`, `version`) VALUES (1, 1);
--> statement-breakpoint
CREATE TRIGGER `queues_insert_bumps_pause_settings` AFTER INSERT ON `queues`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `queues_update_bumps_pause_settings` AFTER UPDATE ON `queues`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `queues_delete_bumps_pause_settings` AFTER DELETE ON `queues`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `routing_rules_insert_bumps_pause_settings` AFTER INSERT ON `routing_rules`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `routing_rules_update_bumps_pause_settings` AFTER UPDATE ON `routing_rules`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `routing_rules_delete_bumps_pause_settings` AFTER DELETE ON `routing_rules`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `policy_rules_insert_bumps_pause_settings` AFTER INSERT ON `policy_rules`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `policy_rules_update_bumps_pause_settings` AFTER UPDATE ON `policy_rules`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `policy_rules_delete_bumps_pause_settings` AFTER DELETE ON `policy_rules`
BEGIN
  UPDATE `pause_settings_version` SET `version` = `version` + 1;
END;
