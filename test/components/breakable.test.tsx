import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { breakable } from "@/components/review-card/breakable";

const html = (text: string) => renderToStaticMarkup(<>{breakable(text)}</>);

describe("breakable", () => {
  it("offers breaks between the words of a long tool name, never inside one", () => {
    expect(html("create_database_role_with_grants")).toBe(
      "create_<wbr/>database_<wbr/>role_<wbr/>with_<wbr/>grants",
    );
    expect(html("rotateProductionCredentials")).toBe("rotate<wbr/>Production<wbr/>Credentials");
    expect(html("github.pulls.merge-request")).toBe("github.<wbr/>pulls.<wbr/>merge-<wbr/>request");
  });

  it("leaves short names and ordinary words whole", () => {
    expect(breakable("refund_order")).toBe("refund_order");
    expect(html("Refund the iPhone order for A-1001")).toBe("Refund the iPhone order for A-1001");
    // Inside a sentence only the long identifier is touched.
    expect(html("2 tool calls: create_database_role_x, send_email")).toBe(
      "2 tool calls: create_<wbr/>database_<wbr/>role_<wbr/>x, send_email",
    );
  });
});
