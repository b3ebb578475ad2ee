
BlogitsJ(.™ =ækn>Ðé=Š	b>2¼¦>òß´½WÓH>Þ©ä=V$Q>q˜p¾