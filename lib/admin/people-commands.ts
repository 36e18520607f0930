import { OPERATOR } from "@/lib/queues/queue-access";
import { invitePerson } from "@/lib/people/invite-person";
import { listPeople } from "@/lib/people/list-people";
import { issuePasswordReset } from "@/lib/people/person-links";
import { updatePerson } from "@/lib/people/update-person";
import { queueIdByName, userIdByEmail } from "./admin-verbs";
import { table, UsageError } from "./cli-support";

// `npm run admin -- reviewer list|invite|rename|deactivate|reactivate|reset-password`: the people
// verbs of the app and the API, as the operator; each change one write batch with its event.

export const PEOPLE_CLI_USAGE = `  reviewer list
  reviewer invite --email E --name N [--queue NAME[:role]]...   (prints a one-time invite link)
  reviewer rename --email E --name N
  reviewer deactivate --email E      (signs them out everywhere and revokes their tokens)
  reviewer reactivate --email E
  reviewer reset-password --email E  (prints a one-time link to set a new password)`;

type Values = { email?: string; name?: string; queue?: string[] };

function needEmail(values: Values, verb: string): string {
  if (!values.email) throw new UsageError(`reviewer ${verb} needs --email.`);
  return values.email;
}

export async function runPeopleCommand(verb: string, values: Values): Promise<string> {
  switch (verb) {
    case "list": {
      const { people } = await listPeople(OPERATOR);
      return table([
        ["EMAIL", "NAME", "STATUS", "QUEUES", "LAST SIGN-IN"],
        ...people.map((p) => [
          p.email,
          p.name,
          p.status,
          p.queues.map((q) => `${q.name}:${q.role}`).join(" ") || "-",
          p.lastSignInAt ?? "-",
        ]),
      ]);
    }
    case "invite": {
      const queues = await Promise.all(
        (values.queue ?? []).map(async (spec) => {
          const [name, role = "reviewer"] = spec.split(":");
          return { queueId: await queueIdByName(name!), role };
        }),
      );
      const { invite } = await invitePerson(OPERATOR, {
        email: needEmail(values, "invite"),
        name: values.name ?? "",
        queues,
      });
      return `${invite!.url}\n(one use, until ${invite!.expiresAt})`;
    }
    case "rename": {
      if (!values.name) throw new UsageError("reviewer rename needs --name.");
      const person = await updatePerson(OPERATOR, await userIdByEmail(needEmail(values, verb)), {
        name: values.name,
      });
      return `Renamed ${person.email} to '${person.name}'.`;
    }
    case "deactivate":
    case "reactivate": {
      const person = await updatePerson(OPERATOR, await userIdByEmail(needEmail(values, verb)), {
        active: verb === "reactivate",
      });
      return `${person.email} is ${person.status}.`;
    }
    case "reset-password": {
      const link = await issuePasswordReset(OPERATOR, await userIdByEmail(needEmail(values, verb)));
      return `${link.url}\n(one use, until ${link.expiresAt})`;
    }
    default:
      throw new UsageError(`Unknown command 'reviewer ${verb}'.`);
  }
}
