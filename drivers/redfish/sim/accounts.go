package sim

import "net/http"

const accountServicePath = "/redfish/v1/AccountService"

// The AccountService is read-only: one Administrator account, the one the
// simulator was started with. Its password is never shown.

func (s *Simulator) getAccountService(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":         accountServicePath,
		"@odata.type":       "#AccountService.v1_12_0.AccountService",
		"Id":                "AccountService",
		"Name":              "Account Service",
		"ServiceEnabled":    true,
		"LocalAccountAuth":  "Enabled",
		"MinPasswordLength": 1,
		"Accounts":          link(accountServicePath + "/Accounts"),
		"Status":            statusOK(),
	})
}

func (s *Simulator) listAccounts(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, collection(accountServicePath+"/Accounts",
		"#ManagerAccountCollection.ManagerAccountCollection", "Accounts Collection",
		[]string{accountServicePath + "/Accounts/1"}))
}

func (s *Simulator) getAccount(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("aid") != "1" {
		writeError(w, errNotFound(r.URL.Path))
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":    accountServicePath + "/Accounts/1",
		"@odata.type":  "#ManagerAccount.v1_10_0.ManagerAccount",
		"Id":           "1",
		"Name":         "User Account",
		"UserName":     s.opts.Username,
		"RoleId":       "Administrator",
		"Enabled":      true,
		"Locked":       false,
		"Password":     nil,
		"AccountTypes": []string{"Redfish"},
	})
}
